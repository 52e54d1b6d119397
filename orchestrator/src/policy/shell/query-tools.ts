import type { CommandClass } from './types';
import { short, type Word } from './words';

/**
 * Tools the classifier calls read-only unless an option makes them write or run something, whose
 * option syntax is not GNU's: gofmt (Go's flag package: `-w`, `--w` and `-w=true` are one flag) and
 * yq (mikefarah's yq parses with pflag, exact names only; the Python yq with argparse, which takes
 * any unambiguous prefix, so `--inp` is its `--in-place`). Anything not known to be harmless asks.
 */

type Judged = [CommandClass, string];

/** gofmt's flags that only change what it prints; `-r RULE` takes a value. */
const GOFMT_PRINTS = new Set(['l', 'd', 'e', 's', 'r', 'h', 'help']);

export function gofmt(args: readonly Word[]): Judged {
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!w.literal && /^[$`]/.test(w.value))
      return ['unknown', `gofmt ${short(w.value)}: an argument only known at run time could be -w`];
    const m = /^--?([^=]+)(=.*)?$/s.exec(w.value);
    // Go's flag package stops at `--` and at the first operand.
    if (w.value === '--' || !m) break;
    const name = m[1]!;
    if (name === 'w') return ['write', 'gofmt -w rewrites files'];
    // -cpuprofile FILE writes a profile; anything unlisted might do more.
    if (!GOFMT_PRINTS.has(name)) return ['unknown', `gofmt -${short(name)}: not a flag known to be read-only`];
    if (name === 'r' && m[2] === undefined) i++;
  }
  return ['read-only', 'gofmt prints formatted code'];
}

export function yq(args: readonly Word[]): Judged {
  for (const w of args) {
    // pflag and argparse take options among the operands: `$X` could be -i.
    if (!w.literal && /^[$`]/.test(w.value))
      return ['unknown', `yq ${short(w.value)}: an argument only known at run time could be -i`];
    const a = w.value;
    if (a === '--') break;
    const long = /^--([^=]+)/.exec(a)?.[1];
    if (long !== undefined) {
      if (
        long === 'inplace' ||
        (long.length >= 3 && 'in-place'.startsWith(long)) ||
        (long.length >= 3 && 'inplace'.startsWith(long))
      ) {
        return ['write', 'yq --inplace rewrites files'];
      }
      // mikefarah yq: --split-exp writes one file per result, named by the expression.
      if (long.startsWith('split-exp') || long.startsWith('spl'))
        return ['unknown', 'yq --split-exp writes files it names at run time'];
      if (long.startsWith('security-enable'))
        return ['unknown', 'yq --security-enable-system-operator lets the expression run programs'];
      continue;
    }
    if (/^-[^-]/.test(a)) {
      const letters = a.slice(1).split('=')[0]!;
      if (letters.includes('i')) return ['write', 'yq -i rewrites files'];
      if (letters.includes('s')) return ['unknown', 'yq -s (mikefarah: --split-exp) writes files it names at run time'];
    }
  }
  return ['read-only', 'yq only prints'];
}
