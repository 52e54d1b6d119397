import { pip } from './package-managers';
import { lookup } from './tables/family';
import { INTERPRETERS, PYTHON_MODULES, type Interpreter } from './tables/interpreters';
import { PHRASE, v, type Judge, type Verdict } from './verdict';
import type { Word } from './words';

/**
 * node, python, ruby, perl, php, tsx, ts-node: a script file is project code; inline code, code
 * from standard input and unknown `python -m` modules are unknown (tables/interpreters.ts).
 */

function interpreter(name: string, spec: Interpreter, args: readonly Word[]): Verdict {
  const inline = (o: string) => spec.inline.includes(o);
  const valued = (o: string) => spec.valued.includes(o);
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const a = w.value;
    if (!w.literal) return v('unknown', `${name}: the script is only known at run time`);
    if (['-v', '-V', '--version', '-h', '--help'].includes(a)) return v('read-only', `${name} ${a} prints information`);
    if (a === '-') return v('unknown', `${name} reads its program from standard input`);
    if (name === 'node' && a === '--test') return v('test-build', 'node --test runs tests');
    if (name === 'python' && a.startsWith('-m')) {
      const mod = a.length > 2 ? a.slice(2) : (args[i + 1]?.value ?? '');
      if (mod === 'pip') return pip(args.slice(a.length > 2 ? i + 1 : i + 2));
      const cls = lookup(PYTHON_MODULES, mod);
      return cls
        ? v(cls, `python -m ${mod}: ${PHRASE[cls]}`)
        : v('unknown', `python -m ${mod}: not a module this classifier knows`);
    }
    if (a.startsWith('--')) {
      const opt = a.split('=')[0]!;
      if (inline(opt)) return v('unknown', `${name} ${opt} runs inline code`);
      if (valued(opt) && !a.includes('=')) i++;
      continue;
    }
    if (a.startsWith('-')) {
      // A cluster such as perl's `-pie` or node's `-pe`: a letter that takes a value ends it.
      for (let k = 1; k < a.length; k++) {
        const o = `-${a[k]!}`;
        if (inline(o)) return v('unknown', `${name} ${o} runs inline code`);
        if (valued(o)) {
          if (k === a.length - 1) i++;
          break;
        }
      }
      continue;
    }
    return v('test-build', `${name} runs the project file ${a}`);
  }
  return v('unknown', `${name} without a script reads code from standard input`);
}

/** The judges of this family, by command name (after aliases: `python3` is `python`). */
export const INTERPRETER_JUDGES: Record<string, Judge> = Object.fromEntries(
  Object.entries(INTERPRETERS).map(([name, spec]): [string, Judge] => [name, (args) => interpreter(name, spec, args)]),
);
