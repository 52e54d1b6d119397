import { hasFlag, operands } from './arguments';
import { lookup } from './tables/family';
import { GIT_SUBCOMMANDS, SAFE_GIT_CONFIG } from './tables/git';
import type { CommandClass } from './types';
import { PHRASE } from './verdict';

/**
 * The class of a git subcommand, from its options and operands (`branch -D`, `diff --output`,
 * `config KEY VALUE`); subcommands whose class never depends on them are in tables/git.ts.
 */

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

export function gitSubcommand(sub: string, a: string[]): [CommandClass, string] {
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
  const cls = lookup(GIT_SUBCOMMANDS, sub);
  if (cls === 'network') return [cls, `git ${sub} talks to a remote`];
  return cls
    ? [cls, `git ${sub}: ${PHRASE[cls]}`]
    : ['unknown', `git ${sub}: not a known git subcommand (it could be an alias)`];
}
