/**
 * The environment commands run with. Nothing of the daemon's own environment is inherited: that
 * is where credentials and configuration live, and commands must not see them.
 *
 * One git setting is always added, after any the caller passes through GIT_CONFIG_COUNT: the
 * workspace root (and any directory holding a path the policy locks) belongs to root, so git would
 * refuse it as a repository of "dubious ownership". Inside a sandbox with one user that check
 * protects nothing.
 */
export function scrubbedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/tmp',
    TMPDIR: '/tmp',
    USER: 'sandbox',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    ...extra,
  };
  const given = Number(env.GIT_CONFIG_COUNT ?? '0');
  const n = Number.isInteger(given) && given >= 0 && given < 1000 ? given : 0;
  env.GIT_CONFIG_COUNT = String(n + 1);
  env[`GIT_CONFIG_KEY_${n}`] = 'safe.directory';
  env[`GIT_CONFIG_VALUE_${n}`] = '*';
  return env;
}
