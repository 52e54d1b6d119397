import { gitSubcommand } from './git-subcommand';
import { FILTER_BRANCH_SCRIPTS, GIT_GLOBAL_OPTIONS, SAFE_GIT_CONFIG } from './tables/git';
import { runTimeWord, v, type Verdict } from './verdict';
import { isGlob, short, type Word } from './words';

/**
 * git, by subcommand and options: what it reads, writes or runs. Only plain `git` can be read-only;
 * options that make it run programs (`-c core.pager=…`, `--exec-path`, `--textconv`, submodule
 * recursion) make it unknown (docs/decisions/0002-git-config-programs.md). The tables are in
 * tables/git.ts.
 */

/**
 * Git subcommands that run shell commands given on the command line (`git rebase -x CMD`, `git
 * bisect run CMD`, `git filter-branch --tree-filter CMD`): not followable, since the command runs
 * over and over in other checkouts, but still parsed so deny rules see it. An argument only known
 * at run time could be such an option. `git submodule foreach CMD` stays followable (unknown).
 */
function gitRunsCommands(sub: string, words: readonly Word[]): Partial<Verdict> | undefined {
  const opaque = (what: string) => `git ${sub}: ${what}`;
  const dynamic = words.find((w) => !w.literal);
  const unless = (w: Word, problem: string) =>
    runTimeWord(w, opaque(`${short(w.value)} is only known at run time and could be ${problem}`));
  switch (sub) {
    case 'rebase': {
      const scripts: Word[] = [];
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        const a = w.value;
        if (!w.literal || a === '--') continue;
        if (a === '--exec' && words[i + 1]) scripts.push(words[++i]!);
        else if (a.startsWith('--exec=')) scripts.push({ ...w, value: a.slice(7), pattern: '' });
        else if (/^-[^-]/.test(a)) {
          for (let k = 1; k < a.length; k++) {
            const c = a[k]!;
            if (c === 'x') {
              const s = k + 1 < a.length ? { ...w, value: a.slice(k + 1), pattern: '' } : words[++i];
              if (s) scripts.push(s);
              break;
            }
            if ('sXC'.includes(c)) {
              if (k === a.length - 1) i++;
              break;
            }
          }
        }
      }
      if (scripts.length) {
        const problem = opaque('--exec runs a shell command after each commit');
        return { problem, inner: scripts.map((script) => ({ label: 'git rebase --exec', script, opaque: problem })) };
      }
      return dynamic && unless(dynamic, '--exec');
    }
    case 'bisect': {
      const first = words[0];
      if (first && !first.literal) return unless(first, 'run');
      if (first?.value !== 'run') return undefined;
      return {
        problem: opaque('run runs a command at every step'),
        inner: words.length > 1 ? [{ label: 'git bisect run', argv: words.slice(1) }] : [],
      };
    }
    case 'filter-branch': {
      const scripts: Word[] = [];
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        const [opt, inline] = w.value.split(/=(.*)/s, 2) as [string, string | undefined];
        if (!w.literal || !FILTER_BRANCH_SCRIPTS.includes(opt)) continue;
        const s = inline !== undefined ? { ...w, value: inline, pattern: '' } : words[++i];
        if (s) scripts.push(s);
      }
      if (scripts.length) {
        const problem = opaque('its filters run shell commands on every commit');
        return { problem, inner: scripts.map((script) => ({ label: 'git filter-branch', script, opaque: problem })) };
      }
      return dynamic && unless(dynamic, 'a filter');
    }
    case 'submodule': {
      // `git submodule [--quiet] foreach [--recursive] CMD…` runs CMD with sh in every submodule.
      const at = words.findIndex((w) => !(w.literal && w.value.startsWith('-')));
      if (at < 0 || !words[at]!.literal || words[at]!.value !== 'foreach') return undefined;
      let from = at + 1;
      while (from < words.length && words[from]!.literal && /^-/.test(words[from]!.value)) from++;
      const cmd = words.slice(from);
      return cmd.length
        ? {
            inner: [
              {
                label: 'git submodule foreach',
                script: { value: cmd.map((w) => w.value).join(' '), literal: cmd.every((w) => w.literal), pattern: '' },
              },
            ],
          }
        : undefined;
    }
  }
  return undefined;
}

/** `git ARGS…`: the global options, then the subcommand (git-subcommand.ts) and what it runs. */
export function git(args: readonly Word[]): Verdict {
  let i = 0;
  let risky: string | undefined;
  for (; i < args.length && args[i]!.literal; i++) {
    const [opt, inline] = args[i]!.value.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!Object.hasOwn(GIT_GLOBAL_OPTIONS, opt)) break;
    const value = GIT_GLOBAL_OPTIONS[opt] && inline === undefined ? args[++i]?.value : inline;
    if (opt === '-c' || opt === '--config-env') {
      if (!SAFE_GIT_CONFIG.test(value ?? ''))
        risky = `git ${opt} ${short((value ?? '').split('=')[0]!)} may make git run another program`;
    }
    if (opt === '--exec-path' && inline !== undefined)
      risky = 'git --exec-path makes git run programs from another directory';
  }
  const rest = args.slice(i);
  const argv = ['git', ...rest.map((w) => w.value)];
  const sub = rest[0];
  if (!sub) return v('read-only', 'git without a subcommand prints help', { argv });
  if (!sub.literal)
    return v('unknown', 'the git subcommand is only known at run time', {
      argv,
      problem: `git ${short(sub.value)}: the subcommand is only known at run time`,
    });
  let [cls, reason] = gitSubcommand(sub.value, argv.slice(2));
  // `git diff *` in a repository holding a file named `--output=x` writes x.
  const dd = rest.findIndex((w) => w.literal && w.value === '--');
  const glob = rest
    .slice(1, dd < 0 ? undefined : dd)
    .find((w) => w.literal && /^[*?[]/.test(w.pattern) && isGlob(w.pattern));
  if (glob && cls === 'read-only')
    [cls, reason] = [
      'unknown',
      `git ${sub.value} ${short(glob.value)}: the glob could expand to a file name that is an option (put it after --)`,
    ];
  // `git -c core.pager=… log` may run anything: its `git log` text must not be trusted to rules.
  if (risky) return v('unknown', risky, { argv, problem: risky });
  const runs = gitRunsCommands(sub.value, rest.slice(1));
  if (runs?.problem) return v('unknown', runs.problem, { ...runs, argv });
  return v(cls, reason, { ...runs, argv });
}
