import { classTable, type Example } from './family';

/**
 * git: which subcommands only read, write, destroy or reach a remote, the global options, and the
 * `-c` keys that cannot name a program. Subcommands whose class depends on their options (`branch
 * -D`, `diff --output`, `config KEY VALUE`) are judged in git-subcommand.ts; options that run
 * commands (`rebase --exec`, `bisect run`) in git-command.ts. Only plain `git` can be read-only
 * (docs/decisions/0002-git-config-programs.md).
 */

/** `git -c key=value` keys that only change formatting or identity; any other key may name a program. */
export const SAFE_GIT_CONFIG =
  /^(color|advice|log|format|user|author|committer|init|column|status|pretty|i18n|blame|grep|safe|gc|maintenance|help|fetch|pull|push|rebase|merge|commit|tag|diff|core)\.(?!.*(pager|editor|command|program|external|driver|textconv|hookspath|fsmonitor|sshcommand|askpass|tool|proxy|cmd))/i;

/** Subcommands whose class does not depend on their arguments (others are judged in git-subcommand.ts). */
export const GIT_SUBCOMMANDS = classTable({
  'read-only': `
  status log show diff blame annotate grep rev-parse ls-files ls-tree cat-file describe shortlog rev-list
  show-ref for-each-ref name-rev merge-base whatchanged count-objects fsck check-ignore check-attr
  check-ref-format verify-commit verify-tag verify-pack var help version cherry range-diff diff-tree
  diff-files diff-index show-branch get-tar-commit-id check-mailmap --version --help -h -v --html-path
  --man-path --info-path --list-cmds`,
  write: `
  add commit checkout switch restore apply merge rebase cherry-pick revert mv am format-patch init notes
  bisect sparse-checkout update-index commit-tree mktag mktree read-tree write-tree merge-file
  symbolic-ref replace pack-refs repack gc maintenance commit-graph multi-pack-index rerere
  checkout-index hash-object stage bundle archive`,
  destructive: 'prune filter-branch filter-repo prune-packed',
  network: `
  push pull fetch clone ls-remote send-email request-pull svn p4 daemon http-backend http-fetch http-push
  upload-pack receive-pack fetch-pack send-pack lfs instaweb`,
});

/** Global options that come before the subcommand; those taking a value list it as `true`. */
export const GIT_GLOBAL_OPTIONS: Record<string, boolean> = {
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

/** Options of `git filter-branch` whose value is a shell command. */
export const FILTER_BRANCH_SCRIPTS = [
  '--env-filter',
  '--tree-filter',
  '--index-filter',
  '--parent-filter',
  '--msg-filter',
  '--commit-filter',
  '--tag-name-filter',
  '--setup',
];

export const GIT_EXAMPLES: Example[] = [
  ['git status', 'read-only'],
  ['git -C . log --oneline', 'read-only'],
  ['git -c color.ui=never diff', 'read-only'],
  ['git -c core.pager=less log', 'unknown'],
  ['git diff --output=x', 'write'],
  ['git diff --outp=x', 'write'],
  ['git grep --open-files-in-pager=vi x', 'unknown'],
  ['git commit -m x', 'write'],
  ['git branch -D old', 'destructive'],
  ['git clean -fdx', 'destructive'],
  ['git push', 'network'],
  ['git fetch origin', 'network'],
  ['git config user.name x', 'write'],
  ['git config core.sshCommand x', 'unknown'],
  ['git frobnicate', 'unknown'],
  ['git log --recurse-submodules', 'unknown'],
];
