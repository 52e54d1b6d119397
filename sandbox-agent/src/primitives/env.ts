import { GIT_PROGRAM_OVERRIDES, GIT_WRAPPER_DIR, SANDBOX_PATH, gitProgramVariables } from '@gatehouse/shared';
import { imageEnvironment } from '../image-env';

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The environment commands run with. Nothing of the daemon's own environment is inherited: that
 * is where credentials and configuration live, and commands must not see them. The toolchain
 * image's own environment (image-env.ts) comes first, so its PATH and variables hold; gatehouse's
 * fixed values go on top of it. A caller passing the default SANDBOX_PATH (or none) gets the
 * image's PATH behind the git wrapper.
 *
 * Whatever the caller passes, the daemon itself makes git safe for every command it starts
 * (docs/decisions/0002-git-config-programs.md), so no invocation — setup, a check command, a
 * runtime call — can leave it out: the git wrapper first on PATH, git's program variables, and the
 * program-key overrides appended after any GIT_CONFIG_COUNT entries the caller gave (later entries
 * win). One more entry follows: the workspace root (and any directory holding a path the policy
 * locks) belongs to root, so git would refuse the repository as of "dubious ownership"; inside a
 * sandbox with one user that check protects nothing.
 */
export function scrubbedEnv(
  extra: Record<string, string> = {},
  opts: { image?: boolean } = {},
): Record<string, string> {
  // A program the daemon runs as root (its own git) gets none of the image's variables: they are the
  // command user's, and may name a file that user wrote (LD_PRELOAD=/workspace/x.so).
  const image = opts.image === false ? {} : imageEnvironment();
  const imagePath = `${GIT_WRAPPER_DIR}:${image.PATH || SYSTEM_PATH}`;
  const env: Record<string, string> = {
    ...image,
    HOME: '/tmp',
    TMPDIR: '/tmp',
    USER: 'sandbox',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    GIT_OPTIONAL_LOCKS: '0',
    ...extra,
    PATH: extra.PATH === undefined || extra.PATH === SANDBOX_PATH ? imagePath : extra.PATH,
    ...gitProgramVariables(),
  };
  if (!(env.PATH ?? '').split(':').includes(GIT_WRAPPER_DIR))
    env.PATH = `${GIT_WRAPPER_DIR}:${env.PATH || SYSTEM_PATH}`;
  const given = Number(extra.GIT_CONFIG_COUNT ?? '0');
  let n = Number.isInteger(given) && given >= 0 && given < 1000 ? given : 0;
  for (const [key, value] of [...GIT_PROGRAM_OVERRIDES, ['safe.directory', '*'] as const]) {
    env[`GIT_CONFIG_KEY_${n}`] = key;
    env[`GIT_CONFIG_VALUE_${n}`] = value;
    n++;
  }
  env.GIT_CONFIG_COUNT = String(n);
  return env;
}
