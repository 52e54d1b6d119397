import { hasFlag, operands } from './arguments';
import type { CommandClass } from './types';
import { PHRASE, runTimeWord, v, type Verdict } from './verdict';
import { isGlob, short, type Word } from './words';

/**
 * git, by subcommand and options: what it reads, writes or runs. Only plain `git` can be read-only;
 * options that make it run programs (`-c core.pager=…`, `--exec-path`, `--textconv`, submodule
 * recursion) make it unknown (docs/decisions/0002-git-config-programs.md).
 */

/** `git -c key=value` keys that only change formatting or identity; any other key may name a program. */
const SAFE_GIT_CONFIG =
  /^(color|advice|log|format|user|author|committer|init|column|status|pretty|i18n|blame|grep|safe|gc|maintenance|help|fetch|pull|push|rebase|merge|commit|tag|diff|core)\.(?!.*(pager|editor|command|program|external|driver|textconv|hookspath|fsmonitor|sshcommand|askpass|tool|proxy|cmd))/i;

const GIT_SUB: Record<string, CommandClass> = {};
const gitSubs = (cls: CommandClass, names: string) => {
  for (const n of names.trim().split(/\s+/)) GIT_SUB[n] = cls;
};
gitSubs(
  'read-only',
  `
  status log show diff blame annotate grep rev-parse ls-files ls-tree cat-file describe shortlog rev-list
  show-ref for-each-ref name-rev merge-base whatchanged count-objects fsck check-ignore check-attr
  check-ref-format verify-commit verify-tag verify-pack var help version cherry range-diff diff-tree
  diff-files diff-index show-branch get-tar-commit-id check-mailmap --version --help -h -v --html-path
  --man-path --info-path --list-cmds`,
);
gitSubs(
  'write',
  `
  add commit checkout switch restore apply merge rebase cherry-pick revert mv am format-patch init notes
  bisect sparse-checkout update-index commit-tree mktag mktree read-tree write-tree merge-file
  symbolic-ref replace pack-refs repack gc maintenance commit-graph multi-pack-index rerere
  checkout-index hash-object stage bundle archive`,
);
gitSubs('destructive', 'prune filter-branch filter-repo prune-packed');
gitSubs(
  'network',
  `
  push pull fetch clone ls-remote send-email request-pull svn p4 daemon http-backend http-fetch http-push
  upload-pack receive-pack fetch-pack send-pack lfs instaweb`,
);

/** Global options that come before the subcommand; those taking a value list it as `true`. */
const GIT_GLOBAL: Record<string, boolean> = {
  '-C': true,
  '-c': true,
  '--git-dir': true,
  '--work-tree': true,
  '--namespace': true,
  '--config-env': true,
  '--super-prefix': true,
  '--attr-source': true,
  '--exec-path': false,
  '-p': false,
  '-P': false,
  '--paginate': false,
  '--no-pager': false,
  '--bare': false,
  '--no-replace-objects': false,
  '--literal-pathspecs': false,
  '--glob-pathspecs': false,
  '--noglob-pathspecs': false,
  '--icase-pathspecs': false,
  '--no-optional-locks': false,
  '--no-lazy-fetch': false,
  '--no-advice': false,
};

/**
 * git's parse-options accepts any unambiguous prefix of a long option (`git grep --open-files=x`,
 * `git archive --outp=f`): true when some argument is `--P` or `--P=…` with P a prefix of one of
 * `names` at least `min` letters long. Over-matching only makes a command ask.
 */
function gitLong(a: readonly string[], min: number, ...names: string[]): boolean {
  return a.some((x) => {
    if (!x.startsWith('--')) return false;
    const p = x.slice(2).split('=', 1)[0]!;
    return p.length >= min && names.some((n) => n.startsWith(p));
  });
}

function gitSubcommand(sub: string, a: string[]): [CommandClass, string] {
  const first = operands(a)[0];
  // Submodules are other repositories, whose config the git wrapper does not see.
  if (gitLong(a, 4, 'recurse-submodules'))
    return ['unknown', `git ${sub} --recurse-submodules runs git in submodules, whose config may name programs`];
  switch (sub) {
    case 'branch': {
      if (hasFlag(a, 'DMCf', '--force')) return ['destructive', 'git branch -D/-M/-f can drop commits'];
      if (
        hasFlag(
          a,
          'dmcu',
          '--delete',
          '--move',
          '--copy',
          '--set-upstream-to',
          '--unset-upstream',
          '--edit-description',
          '--track',
        )
      )
        return ['write', 'git branch changes branches'];
      return first === undefined ||
        hasFlag(
          a,
          'lar',
          '--list',
          '--all',
          '--remotes',
          '--contains',
          '--merged',
          '--no-merged',
          '--points-at',
          '--show-current',
        )
        ? ['read-only', 'git branch lists branches']
        : ['write', 'git branch creates a branch'];
    }
    case 'tag':
      if (hasFlag(a, 'd', '--delete')) return ['destructive', 'git tag -d deletes tags'];
      return first === undefined || hasFlag(a, 'lv', '--list', '--verify', '--contains', '--points-at')
        ? ['read-only', 'git tag lists tags']
        : ['write', 'git tag creates a tag'];
    case 'stash':
      if (first === 'list' || first === 'show') return ['read-only', `git stash ${first} only reads`];
      if (first === 'drop' || first === 'clear') return ['destructive', `git stash ${first} deletes stashed changes`];
      return ['write', 'git stash changes the working tree'];
    case 'remote':
      if (first === undefined || first === 'get-url') return ['read-only', 'git remote lists remotes'];
      if (first === 'show')
        return hasFlag(a, 'n')
          ? ['read-only', 'git remote show -n only reads']
          : ['network', 'git remote show asks the remote'];
      if (first === 'update' || first === 'prune') return ['network', `git remote ${first} fetches from remotes`];
      return ['write', `git remote ${first} changes the remote configuration`];
    case 'config': {
      const changes =
        gitLong(a, 2, 'unset', 'unset-all', 'add', 'replace-all', 'edit', 'rename-section', 'remove-section') ||
        hasFlag(a, 'e');
      if (
        !changes &&
        (hasFlag(
          a,
          'l',
          '--list',
          '--get',
          '--get-all',
          '--get-regexp',
          '--get-urlmatch',
          '--get-color',
          '--get-colorbool',
        ) ||
          first === 'get' ||
          first === 'list')
      )
        return ['read-only', 'git config reads settings'];
      const ops = operands(a).filter((o) => o !== 'set');
      if (ops.length <= 1 && !changes) return ['read-only', 'git config reads a setting'];
      if (ops.length <= 1) return ['write', 'git config changes the configuration'];
      const key = ops[0] ?? '';
      return SAFE_GIT_CONFIG.test(key)
        ? ['write', 'git config changes a setting']
        : ['unknown', `git config ${key}: the setting may make git run another program`];
    }
    case 'worktree':
      if (first === 'list') return ['read-only', 'git worktree list only reads'];
      if (first === 'remove' || first === 'prune')
        return ['destructive', `git worktree ${first} deletes a working tree`];
      return ['write', 'git worktree changes working trees'];
    case 'reflog':
      return first === 'expire' || first === 'delete'
        ? ['destructive', `git reflog ${first} drops history`]
        : ['read-only', 'git reflog only reads'];
    case 'submodule':
      if (first === undefined || first === 'status' || first === 'summary')
        return ['read-only', 'git submodule status only reads'];
      if (first === 'foreach') return ['unknown', 'git submodule foreach runs a shell command'];
      if (first === 'deinit') return ['destructive', 'git submodule deinit removes a submodule'];
      if (
        first === 'init' ||
        first === 'sync' ||
        first === 'absorbgitdirs' ||
        first === 'set-url' ||
        first === 'set-branch'
      )
        return ['write', `git submodule ${first} changes configuration`];
      return ['network', `git submodule ${first} fetches from remotes`];
    case 'reset':
      return hasFlag(a, '', '--hard')
        ? ['destructive', 'git reset --hard discards uncommitted changes']
        : ['write', 'git reset moves HEAD'];
    case 'clean':
      return hasFlag(a, 'n', '--dry-run') && !hasFlag(a, 'f', '--force')
        ? ['read-only', 'git clean -n only lists']
        : ['destructive', 'git clean deletes untracked files'];
    case 'rm':
      return hasFlag(a, 'f', '--force')
        ? ['destructive', 'git rm -f deletes files with changes']
        : ['write', 'git rm removes tracked files'];
    case 'checkout':
    case 'switch':
      return hasFlag(a, 'f', '--force', '--discard-changes')
        ? ['destructive', `git ${sub} --force discards changes`]
        : ['write', `git ${sub} changes the working tree`];
    case 'diff':
    case 'log':
    case 'show':
    case 'whatchanged':
    case 'diff-tree':
    case 'diff-files':
    case 'diff-index':
    case 'range-diff':
    case 'shortlog':
    case 'cherry':
      if (gitLong(a, 3, 'output')) return ['write', `git ${sub} --output writes a file`];
      if (hasFlag(a, '', '--ext-diff', '--textconv'))
        return ['unknown', `git ${sub} --ext-diff runs a configured program`];
      return ['read-only', `git ${sub} only reads`];
    case 'grep':
      return hasFlag(a, 'O') || gitLong(a, 2, 'open-files-in-pager')
        ? ['unknown', 'git grep -O runs a pager program']
        : ['read-only', 'git grep only reads'];
    case 'fsck':
      return gitLong(a, 3, 'lost-found')
        ? ['write', 'git fsck --lost-found writes into .git']
        : ['read-only', 'git fsck only reads'];
    case 'help':
      return hasFlag(a, 'wmi', '--web', '--man', '--info')
        ? ['unknown', 'git help -w/-m/-i runs a configured viewer']
        : ['read-only', 'git help prints help'];
    case 'blame':
    case 'annotate':
      return gitLong(a, 4, 'textconv')
        ? ['unknown', `git ${sub} --textconv runs a configured program`]
        : ['read-only', `git ${sub} only reads`];
    case 'cat-file':
      return gitLong(a, 3, 'textconv', 'filters')
        ? ['unknown', 'git cat-file --textconv/--filters runs configured programs']
        : ['read-only', 'git cat-file only reads'];
    case 'difftool':
    case 'mergetool':
      return ['unknown', `git ${sub} runs a configured program`];
    case 'archive':
      if (gitLong(a, 3, 'remote', 'exec')) return ['network', 'git archive --remote asks a remote'];
      return hasFlag(a, 'o') || gitLong(a, 2, 'output')
        ? ['write', 'git archive writes a file']
        : ['read-only', 'git archive prints an archive'];
  }
  const cls = GIT_SUB[sub];
  if (cls === 'network') return [cls, `git ${sub} talks to a remote`];
  return cls
    ? [cls, `git ${sub}: ${PHRASE[cls]}`]
    : ['unknown', `git ${sub}: not a known git subcommand (it could be an alias)`];
}

/** Options of `git filter-branch` whose value is a shell command. */
const FILTER_BRANCH_SCRIPTS = [
  '--env-filter',
  '--tree-filter',
  '--index-filter',
  '--parent-filter',
  '--msg-filter',
  '--commit-filter',
  '--tag-name-filter',
  '--setup',
];

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

export function git(args: readonly Word[]): Verdict {
  let i = 0;
  let risky: string | undefined;
  for (; i < args.length && args[i]!.literal; i++) {
    const [opt, inline] = args[i]!.value.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!(opt in GIT_GLOBAL)) break;
    const value = GIT_GLOBAL[opt] && inline === undefined ? args[++i]?.value : inline;
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
