import { spec } from '../options';
import { classTable, names, type Aliases, type Example } from './family';

/**
 * Package managers: npm, yarn, pnpm, bun and pip, by subcommand. Installing, publishing or asking
 * the registry reaches the network; a name that is not a known subcommand runs a package.json
 * script (yarn, pnpm, bun), which is project code. The code that reads these is package-managers.ts.
 */

/** npm's options that can come before the subcommand; `true` when they take a value. */
export const NPM_GLOBAL_OPTIONS: Record<string, boolean> = {
  '--prefix': true,
  '--workspace': true,
  '-w': true,
  '--loglevel': true,
  '--userconfig': true,
  '--registry': true,
  '--cache': true,
  '--color': false,
  '--no-color': false,
  '--workspaces': false,
  '-ws': false,
  '--include-workspace-root': false,
  '--if-present': false,
  '-s': false,
  '--silent': false,
  '-q': false,
  '--quiet': false,
  '-d': false,
  '-dd': false,
  '--verbose': false,
  '-g': false,
  '--global': false,
  '-y': false,
  '--yes': false,
  '--no-audit': false,
  '--no-fund': false,
  '--prefer-offline': false,
  '--offline': false,
  '--no-update-notifier': false,
};

/** npm subcommands by class (`exec`, `version`, `init`, `config` and `cache` are judged in package-managers.ts). */
export const NPM_SUBCOMMANDS = classTable({
  'test-build': 'test t tst run run-script rum urn start restart stop rebuild rb',
  network: `
  install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install install-clean ic
  update up upgrade udpate install-test it install-ci-test cit publish unpublish deprecate dist-tag
  access owner team org login adduser add-user logout whoami ping search s se find view v info show
  outdated audit doctor dedupe ddp find-dupes create star unstar stars hook token profile repo docs
  bugs home`,
  write: 'uninstall remove rm r un unlink link ln pack prune shrinkwrap set-script init',
  'read-only': 'ls list ll la explain why query root bin prefix help help-search completion fund sbom -v --version -h',
});

/** yarn, pnpm and bun subcommands that reach the package registry. */
export const PM_NETWORK = new Set(
  names(`
  install i add a update up upgrade upgrade-interactive dlx create c publish login logout outdated audit
  info view search fetch dedupe import npm unplug global self-update setup env x pm install-test it`),
);
/** yarn, pnpm and bun subcommands that change the project's files. */
export const PM_WRITE = new Set(names('remove rm uninstall un unlink link ln prune patch patch-commit init pack'));
/** yarn, pnpm and bun subcommands that only print. */
export const PM_READ = new Set(names('list ls ll why root bin help --version -v -h --help licenses config'));

/**
 * The options read before a runner's TOOL or a package manager's subcommand. npm's own parser
 * (nopt) and yarn's, pnpm's and bun's do not take abbreviations the GNU way, so names must match.
 */
export const RUNNER_OPTIONS = spec('p:c:', 'package= call= shell-mode', { abbrev: 'exact' });
export const PM_OPTIONS = spec('C:F:vh', 'dir= filter= cwd=', { abbrev: 'exact' });

/** pip subcommands by class; `config` and `cache` read or change settings (PIP_SETTINGS). */
export const PIP_SUBCOMMANDS = classTable({
  network: 'install download wheel index search',
  write: 'uninstall',
  'read-only': 'list show freeze check inspect help debug hash',
});
/** pip subcommands that only read settings when one of their words is in PIP_SETTINGS_READ. */
export const PIP_SETTINGS = new Set(names('config cache'));
export const PIP_SETTINGS_READ = names('list get dir info');

export const PACKAGE_MANAGER_ALIASES: Aliases = { pip3: 'pip', pipx: 'pip' };

export const PACKAGE_MANAGER_EXAMPLES: Example[] = [
  ['npm test', 'test-build'],
  ['npm run build', 'test-build'],
  ['npm ci', 'network'],
  ['npm --prefix web install', 'network'],
  ['npm ls', 'read-only'],
  ['npm version', 'read-only'],
  ['npm version patch', 'write'],
  ['npm cache clean', 'destructive'],
  ['npm frobnicate', 'unknown'],
  ['npx tsc --noEmit', 'test-build'],
  ['npx left-pad', 'unknown'],
  ['npx -c "rm -rf x"', 'unknown'],
  ['pnpm -C web test', 'test-build'],
  ['pnpm add left-pad', 'network'],
  ['yarn', 'network'],
  ['yarn why react', 'read-only'],
  ['yarn workspace web build', 'test-build'],
  ['bun run.ts', 'test-build'],
  ['bunx prettier --write .', 'write'],
  ['pip install requests', 'network'],
  ['pip3 list', 'read-only'],
  ['pip uninstall requests', 'write'],
  ['pip config get global.index-url', 'read-only'],
  ['deno eval 1', 'unknown'],
];
