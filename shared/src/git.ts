/**
 * How every git that gatehouse or the agent causes in a sandbox is kept from running programs a
 * repository configures (docs/decisions/0002-git-config-programs.md). Two layers:
 *  - GIT_SAFE_ENV: environment for every command and git run in the sandbox. Config given through
 *    GIT_CONFIG_COUNT/KEY_n/VALUE_n has command-line precedence, so it beats .git/config, included
 *    files, ~/.gitconfig and the system file for the keys with fixed names below.
 *  - the `git` wrapper (images/sandbox/bin/git, first on the sandbox PATH): keys whose names the
 *    repository chooses (filter.<driver>.clean, diff.<driver>.textconv, merge.<driver>.driver,
 *    pager.<cmd>, `!` aliases…) cannot be named in advance; it lists the config git would read and
 *    neutralises every such key it finds, and refuses to run when the config includes other files.
 */

/** Where the wrapper lives in the sandbox image; it must come first on PATH. */
export const GIT_WRAPPER_DIR = '/opt/gatehouse/bin';

/**
 * The default PATH for commands in the sandbox: the wrapper's directory, then the system's. A
 * caller that passes exactly this PATH gets the toolchain image's own PATH instead, behind the
 * wrapper (sandbox-agent/src/primitives/env.ts).
 */
export const SANDBOX_PATH = `${GIT_WRAPPER_DIR}:/usr/local/bin:/usr/bin:/bin`;

/**
 * The self-contained node and git every run image carries (images/sandbox/assemble-runtime.sh):
 * the daemon's git, and the command user's when the image has none. Debian's git looks for its
 * helpers and templates under /usr; these variables point it into the runtime instead.
 */
export const RUNTIME_DIR = '/opt/gatehouse/runtime';
export const RUNTIME_GIT = `${RUNTIME_DIR}/bin/git`;
export const RUNTIME_GIT_ENV: Readonly<Record<string, string>> = {
  GIT_EXEC_PATH: `${RUNTIME_DIR}/libexec/git-core`,
  GIT_TEMPLATE_DIR: `${RUNTIME_DIR}/share/git-core/templates`,
};

/**
 * A shell snippet for program keys that cannot be emptied (git would try to run ""): it runs no
 * program (echo and exit are shell builtins) and makes git fail with a message saying why.
 */
export const GIT_DISABLED_PROGRAM =
  'echo "gatehouse: programs named in the git config are disabled in the sandbox" >&2; exit 1';

/** Program-running keys with fixed names, and the value that makes each harmless. */
export const GIT_PROGRAM_OVERRIDES: ReadonlyArray<readonly [key: string, value: string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  ['core.askPass', ''],
  ['core.sshCommand', 'ssh'],
  ['core.gitProxy', ''],
  ['core.alternateRefsCommand', GIT_DISABLED_PROGRAM],
  // `git diff` would run this for every file: the wrapper and git_diff pass --no-ext-diff.
  ['diff.external', GIT_DISABLED_PROGRAM],
  // An empty helper resets the list: no credential helper runs.
  ['credential.helper', ''],
  ['gpg.program', 'gpg'],
  ['gpg.openpgp.program', 'gpg'],
  ['gpg.x509.program', 'gpgsm'],
  ['gpg.ssh.program', 'ssh-keygen'],
  ['gpg.ssh.defaultKeyCommand', GIT_DISABLED_PROGRAM],
  ['interactive.diffFilter', 'cat'],
  ['uploadpack.packObjectsHook', GIT_DISABLED_PROGRAM],
  ['protocol.ext.allow', 'never'],
];

function configEnv(pairs: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/**
 * The environment for everything run in the sandbox (bash commands, the git tools, the baseline):
 * the overrides above, git's own program variables pointed at harmless values, and the wrapper
 * first on PATH. GIT_OPTIONAL_LOCKS=0 keeps `git status` from rewriting the index.
 */
export const GIT_SAFE_ENV: Readonly<Record<string, string>> = {
  ...configEnv(GIT_PROGRAM_OVERRIDES),
  ...gitProgramVariables(),
  GIT_OPTIONAL_LOCKS: '0',
  PATH: SANDBOX_PATH,
};

/** git's own variables that name a program (or the system config), each pointed at a harmless value. */
export function gitProgramVariables(): Record<string, string> {
  return {
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: ':',
    GIT_SEQUENCE_EDITOR: ':',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
  };
}

/**
 * Options for git runs by gatehouse itself (the git tools, the baseline), which also ignore the
 * global config. Kept for callers that pass options rather than environment.
 */
export const SAFE_GIT = [
  '--no-optional-locks',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
];
export const SAFE_GIT_ENV: Record<string, string> = { ...GIT_SAFE_ENV, GIT_CONFIG_GLOBAL: '/dev/null' };
