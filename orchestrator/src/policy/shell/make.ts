import { STDIN_FILES } from './tables/build-tools';
import { plain, runTimeWord, v, type Verdict } from './verdict';
import type { Condition } from './variables';
import { short, type Word } from './words';

/**
 * make runs the project's Makefile (test-build). `make -f -` (or /dev/stdin) reads recipes from
 * standard input and `--eval` takes them from the command line: shell commands the line hides.
 */
export function make(typed: string, args: readonly Word[]): Verdict {
  const problem = (p: string) => v('unknown', p, { problem: p });
  const conditions: Condition[] = [];
  const file = (w: Word | undefined) => {
    if (w && !w.literal) return problem(`${typed} -f ${short(w.value)}: the makefile is only known at run time`);
    if (w && STDIN_FILES.has(w.value))
      return problem(`${typed} -f ${w.value} reads a makefile from standard input, whose recipes cannot be seen`);
    return undefined;
  };
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const a = w.value;
    if (!w.literal) {
      if (!/^[$`]/.test(a)) continue;
      const r = runTimeWord(w, `${typed} ${short(a)}: an argument only known at run time could be -f - or --eval`);
      if (r.problem) return problem(r.problem);
      conditions.push(...(r.conditions ?? []));
      continue;
    }
    if (a === '--') break;
    if (a.startsWith('--eval')) return problem(`${typed} --eval runs recipes given on the command line`);
    const long = /^--(file|makefile)(=(.*))?$/s.exec(a);
    if (long) {
      const bad = file(long[2] !== undefined ? { ...w, value: long[3]!, pattern: '' } : args[++i]);
      if (bad) return bad;
      continue;
    }
    if (!/^-[^-]/.test(a)) continue;
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      if (c === 'E') return problem(`${typed} -E runs recipes given on the command line`);
      if (c === 'f') {
        const bad = file(k + 1 < a.length ? { ...w, value: a.slice(k + 1), pattern: '' } : args[++i]);
        if (bad) return bad;
        break;
      }
      if ('CIoW'.includes(c)) {
        if (k === a.length - 1) i++;
        break;
      }
    }
  }
  return { ...plain(typed, 'test-build'), ...(conditions.length ? { conditions } : {}) };
}
