/**
 * Options for git runs that must not execute anything the repository configures: a repository's
 * config can name programs (fsmonitor, hooks, external diff, textconv) that git would run. Used by
 * the daemon's baseline and by the read-only git tools. Clean/smudge filters named in the
 * repository's own config and .gitattributes are not covered: git has no switch to disable them.
 */
export const SAFE_GIT = ['--no-optional-locks', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'diff.external=', '-c', 'core.pager=cat'];
export const SAFE_GIT_ENV: Record<string, string> = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
