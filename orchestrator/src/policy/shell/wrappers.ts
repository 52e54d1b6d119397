import { isAssignment } from './arguments';
import { launcher } from './package-managers';
import { RUNNER_OPTIONS } from './tables/package-managers';
import { readOptions } from './read-options';
import { lookup } from './tables/family';
import { COMMAND, DOAS, ENV, PREFIX, SHELLS, SUDO, TIME, TIMEOUT, WATCH, WRAPPERS, XARGS } from './tables/wrappers';
import type { Inner, Verdict } from './verdict';
import type { Word } from './words';

/**
 * Commands that run other commands. A rule about `git push` must see the `git push` inside
 * `timeout 5 git push`, `sudo git push` or `bash -c "git push"`, so these are unwrapped and the
 * inner command is classified in their place (the wrapper is recorded in `via`).
 */

export interface Unwrapped {
  /** The wrapper is itself a command to judge (`sudo` is privilege, `find -delete` destructive). */
  self?: Verdict;
  runs: Inner[];
  /** `NAME=value` words the wrapper puts in the environment (`env A=1 cmd`, `sudo A=1 cmd`). */
  assignments?: Word[];
  /** Files the wrapper itself writes (`find -fprint f`, `time -o f`). */
  writes?: Word[];
}

/** A wrapper given an option it does not have, or an abbreviation of several: it refuses to run, but ask. */
const badOption = (name: string, bad: string | undefined): Verdict | undefined =>
  bad ? { class: 'unknown', reason: `${name} ${bad}: not an option ${name} is known to take` } : undefined;

/** What xargs appends: arguments read from its input, only known at run time. */
const XARGS_INPUT: Word = { value: '...', literal: false, pattern: '' };

/** Words into which a wrapper substitutes run-time text (`find -exec … {}`, `xargs -I {}`) are not literal. */
function substituted(words: Word[], placeholder: string): Word[] {
  return words.map((w) => (w.value.includes(placeholder) ? { ...w, literal: false, pattern: '' } : w));
}

function joinWords(words: Word[]): Word {
  return {
    value: words.map((w) => w.value).join(' '),
    literal: words.every((w) => w.literal),
    pattern: words.map((w) => w.pattern).join(' '),
  };
}

/** `[NAME=value…] cmd…` after the options, as `env` and `sudo` accept. */
function withAssignments(label: string, words: Word[], from: number, self?: Verdict): Unwrapped | null {
  let i = from;
  while (i < words.length && isAssignment(words[i]!)) i++;
  if (i >= words.length) return self ? { self, runs: [], assignments: words.slice(from, i) } : null;
  return { self, runs: [{ label, argv: words.slice(i) }], assignments: words.slice(from, i) };
}

/**
 * What `env -u NAME` and `env -i` (or `-`, and any abbreviation GNU env accepts) take out of the
 * environment, as empty assignments, so that removing PATH or git's overrides is judged like
 * setting them (`env -u GIT_CONFIG_COUNT git status`; `env -i` leaves PATH unset).
 */
function clearedVariables(options: Word[]): Word[] {
  const out: Word[] = [];
  const empty = (name: string): Word => ({ value: `${name}=`, literal: true, pattern: `${name}=` });
  for (let i = 0; i < options.length; i++) {
    const a = options[i]!.value;
    const long = /^--([^=]+)(?:=(.*))?$/s.exec(a);
    if (a === '-' || (long && long[1]!.length >= 1 && 'ignore-environment'.startsWith(long[1]!)))
      out.push(empty('PATH'));
    else if (long && long[1]!.length >= 1 && 'unset'.startsWith(long[1]!))
      out.push(empty(long[2] ?? options[++i]?.value ?? ''));
    else if (/^-[^-]/.test(a)) {
      for (let k = 1; k < a.length; k++) {
        if (a[k] === 'i') out.push(empty('PATH'));
        if (a[k] === 'u' || a[k] === 'C' || a[k] === 'S') {
          if (a[k] === 'u') out.push(empty(k + 1 < a.length ? a.slice(k + 1) : (options[++i]?.value ?? '')));
          break;
        }
      }
    }
  }
  return out;
}

function shell(name: string, words: Word[]): Unwrapped {
  let i = 1;
  let command = false;
  let stdin = false;
  for (; i < words.length; i++) {
    const w = words[i]!;
    const a = w.value;
    if (!w.literal || a === '-' || a === '--' || !/^[-+]./.test(a)) {
      if (a === '-' || a === '--') i++;
      break;
    }
    if (a.startsWith('--')) {
      if (a === '--version' || a === '--help')
        return { self: { class: 'read-only', reason: `${name} ${a} prints information` }, runs: [] };
      if (a === '--rcfile' || a === '--init-file') i++;
      continue;
    }
    for (const c of a.slice(1)) {
      if (c === 'c') command = true;
      if (c === 's') stdin = true;
    }
    if (/[oO]$/.test(a)) i++; // `-o pipefail`, `-O extglob`
  }
  if (command) {
    const script = words[i];
    return script ? { runs: [{ label: `${name} -c`, script }] } : { runs: [] };
  }
  if (stdin || i >= words.length) return { runs: [{ label: name, stdin: true }] };
  return { runs: [{ label: name, file: words[i]! }] };
}

function find(words: Word[]): Unwrapped {
  const runs: Inner[] = [];
  const writes: Word[] = [];
  let deletes = false;
  // `X=-delete; find . $X`, `… | xargs find .`: a word only known at run time could be -delete or -exec.
  const dynamic = words.slice(1).find((w) => !w.literal);
  for (let i = 1; i < words.length; i++) {
    const a = words[i]!.value;
    if (a === '-delete') deletes = true;
    else if (['-fprint', '-fprint0', '-fprintf', '-fls'].includes(a) && words[i + 1]) writes.push(words[++i]!);
    else if (['-exec', '-execdir', '-ok', '-okdir'].includes(a)) {
      let end = i + 1;
      while (end < words.length && words[end]!.value !== ';' && words[end]!.value !== '+') end++;
      if (end > i + 1) runs.push({ label: `find ${a}`, argv: substituted(words.slice(i + 1, end), '{}') });
      i = end;
    }
  }
  const self: Verdict = deletes
    ? { class: 'destructive', reason: 'find -delete deletes files' }
    : dynamic
      ? {
          class: 'unknown',
          reason: `find ${dynamic.value.slice(0, 20)}: an argument only known at run time could be -delete or -exec`,
        }
      : writes.length
        ? { class: 'write', reason: 'find -fprint writes a file' }
        : { class: 'read-only', reason: 'find lists files' };
  return { self, runs, writes };
}

/**
 * A package runner (`npx`, `npm exec`, `pnpm dlx`…; see `launcher`). What it runs may be a package
 * the registry supplies rather than the program of that name, so when TOOL is a wrapper (`npx env
 * rm -rf x`, `npx find . -delete`) the runner is unknown, and TOOL is followed so rules still see
 * the command it runs. `-c STR` runs a shell string. An ordinary TOOL is left to commands.ts, which
 * classifies it as that tool (and an unknown one as unknown).
 */
function launch(label: string, words: Word[], next: number): Unwrapped | null {
  const o = readOptions(words, next, RUNNER_OPTIONS);
  const call = o.values.get('-c') ?? o.values.get('--call');
  if (call || o.flags.has('--shell-mode')) {
    const script = call ?? joinWords(words.slice(o.next));
    return {
      self: { class: 'unknown', reason: `${label} -c runs a shell string, with the project's programs first in PATH` },
      runs: [{ label: `${label} -c`, script }],
    };
  }
  const tool = words[o.next];
  if (!tool?.literal) return null;
  // `@scope/pkg@1.2` runs the bin named after the package.
  const bin = tool.value.replace(/^@[^/]+\//, '').replace(/@[^@]*$/, '');
  if (!WRAPPERS.has(bin)) return null;
  return {
    self: { class: 'unknown', reason: `${label} ${bin}: a program the registry may supply, running another command` },
    runs: [{ label, argv: [{ ...tool, value: bin, pattern: bin }, ...words.slice(o.next + 1)] }],
  };
}

/**
 * If `words` (a command whose name is the literal `name`, already a basename) runs another
 * command, what it runs; null when it is an ordinary command (or a wrapper with nothing to run,
 * like a bare `env`, which is then classified as itself).
 */
export function unwrap(name: string, words: Word[]): Unwrapped | null {
  const spec = lookup(PREFIX, name);
  if (spec) {
    const o = readOptions(words, 1, spec);
    return o.next < words.length ? { runs: [{ label: name, argv: words.slice(o.next) }] } : null;
  }
  if (SHELLS.has(name)) return shell(name, words);
  const launched = launcher(name, words);
  if (launched) {
    const l = launch(launched.label, words, launched.next);
    if (l) return l;
  }
  switch (name) {
    case 'env': {
      let o = readOptions(words, 1, ENV);
      let bad = o.bad;
      while (words[o.next]?.value === '-') {
        o = readOptions(words, o.next + 1, ENV);
        bad ??= o.bad;
      }
      const split = o.values.get('-S') ?? o.values.get('--split-string');
      // `env -S 'cmd args'` splits a string into words: close enough to a shell string to parse as one.
      if (split) return { runs: [{ label: 'env -S', script: joinWords([split, ...words.slice(o.next)]) }] };
      const self = badOption('env', bad);
      const found = withAssignments('env', words, o.next, self);
      const cleared = clearedVariables(words.slice(1, o.next));
      return found && cleared.length ? { ...found, assignments: [...cleared, ...(found.assignments ?? [])] } : found;
    }
    case 'timeout': {
      const o = readOptions(words, 1, TIMEOUT);
      return o.next + 1 < words.length ? { runs: [{ label: 'timeout', argv: words.slice(o.next + 1) }] } : null;
    }
    case 'time': {
      const o = readOptions(words, 1, TIME);
      const out = o.values.get('-o') ?? o.values.get('--output');
      const self = badOption('time', o.bad);
      const wrote = out ? [out] : [];
      return o.next < words.length
        ? { ...(self ? { self } : {}), runs: [{ label: 'time', argv: words.slice(o.next) }], writes: wrote }
        : null;
    }
    case 'command': {
      const o = readOptions(words, 1, COMMAND);
      if (o.flags.has('-v') || o.flags.has('-V')) return null; // only looks the name up
      return o.next < words.length ? { runs: [{ label: 'command', argv: words.slice(o.next) }] } : null;
    }
    case 'xargs': {
      const o = readOptions(words, 1, XARGS);
      if (o.next >= words.length) return null;
      // Input items replace the placeholder (`-I {}`), or are appended: either way only known at run time.
      const replace =
        o.values.get('-I')?.value ??
        o.values.get('-i')?.value ??
        o.values.get('--replace')?.value ??
        (o.flags.has('-i') || o.flags.has('--replace') ? '{}' : undefined);
      const argv = replace ? substituted(words.slice(o.next), replace) : [...words.slice(o.next), XARGS_INPUT];
      const self = badOption('xargs', o.bad);
      return { ...(self ? { self } : {}), runs: [{ label: 'xargs', argv }] };
    }
    case 'find':
      return find(words);
    case 'sudo':
    case 'doas': {
      const self: Verdict = { class: 'privilege', reason: `${name} runs a command as another user` };
      const o = readOptions(words, 1, name === 'sudo' ? SUDO : DOAS);
      const inner = withAssignments(name, words, o.next, self);
      if (inner?.runs.length) return inner;
      // `sudo -i`, `sudo -s`: an interactive root shell, whose commands come from standard input.
      const shellFlag = ['-i', '-s', '--login', '--shell'].find((f) => o.flags.has(f));
      return shellFlag ? { self, runs: [{ label: `${name} ${shellFlag}`, stdin: true }] } : { self, runs: [] };
    }
    case 'su': {
      const self: Verdict = { class: 'privilege', reason: 'su runs a shell as another user' };
      const at = words.findIndex((w, k) => k > 0 && (w.value === '-c' || w.value === '--command'));
      const inline = words.find((w) => w.value.startsWith('--command='));
      if (at > 0 && words[at + 1]) return { self, runs: [{ label: 'su -c', script: words[at + 1]! }] };
      if (inline)
        return {
          self,
          runs: [{ label: 'su -c', script: { ...inline, value: inline.value.slice(10), pattern: inline.pattern } }],
        };
      return { self, runs: [{ label: 'su', stdin: true }] };
    }
    case 'eval':
      return {
        self: { class: 'unknown', reason: 'eval runs a string as a command' },
        runs:
          words.length > 1
            ? [{ label: 'eval', script: joinWords(words.slice(1)), opaque: 'eval runs a string as a command' }]
            : [],
      };
    case 'alias': {
      const defs = words.slice(1).filter((w) => w.value.includes('='));
      if (defs.length === 0) return null; // listing aliases
      return {
        self: { class: 'unknown', reason: 'alias changes what later commands run' },
        runs: defs.map((w) => ({
          label: 'alias',
          script: { ...w, value: w.value.slice(w.value.indexOf('=') + 1) },
          opaque: 'alias changes what later commands run',
        })),
      };
    }
    case 'trap': {
      const args = words.slice(1).filter((w) => w.value !== '--');
      if (args.length < 2 || /^-[lp]$/.test(args[0]!.value) || args[0]!.value === '-' || args[0]!.value === '')
        return null;
      return { runs: [{ label: 'trap', script: args[0]! }] };
    }
    case 'watch': {
      const o = readOptions(words, 1, WATCH);
      if (o.next >= words.length) return null;
      const rest = words.slice(o.next);
      return o.flags.has('-x') || o.flags.has('--exec')
        ? { runs: [{ label: 'watch', argv: rest }] }
        : { runs: [{ label: 'watch', script: joinWords(rest) }] };
    }
  }
  return null;
}
