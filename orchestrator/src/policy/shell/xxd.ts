import type { OptionVerdict } from './options';
import { isGlob, short, type Word } from './words';

/** xxd's own option syntax: single-dash words (`-c 16`, `-cols 16`, `-c16`); a second operand is its output file. */
const XXD_FLAGS =
  /^-(a|autoskip|b|bits|C|capitalize|d|decimal|e|E|EBCDIC|h|help|i|include|p|ps|postscript|plain|r|revert|u|uppercase|v|version)$/;
const XXD_VALUED = /^-(c|cols|g|groupsize|l|len|n|name|o|offset|s|seek|R)$/;
/** `xxd [options] [IN [OUT]]`: read-only unless it is given an output file or an unknown option. */
export function xxd(args: readonly Word[]): OptionVerdict {
  const judged = (cls: OptionVerdict['class'], reason?: string, writes: string[] = []): OptionVerdict => ({
    class: cls,
    ...(reason ? { reason } : {}),
    writes,
    conditions: [],
  });
  const ops: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!w.literal)
      return judged('unknown', `xxd ${short(w.value)}: an argument only known at run time could be an output file`);
    if (w.value === '--') {
      ops.push(...args.slice(i + 1));
      break;
    }
    if (isGlob(w.pattern))
      return judged('unknown', `xxd ${short(w.value)}: the glob could expand to an option or to an output file`);
    if (!w.value.startsWith('-') || w.value === '-') ops.push(w);
    else if (XXD_VALUED.test(w.value)) i++;
    else if (!XXD_FLAGS.test(w.value) && !/^-[cglnosR][^a-z]/.test(w.value))
      return judged('unknown', `xxd ${short(w.value)}: not an option known to be read-only`);
  }
  const out = ops[1];
  return out && out.value !== '-'
    ? judged('write', `xxd IN OUT writes ${short(out.value)}`, [out.value])
    : judged('read-only');
}
