import { createHash } from 'node:crypto';

export interface SetupKeyInputs {
  /** The run image's id (a content hash): a new toolchain or daemon is a new environment. */
  runImageId: string;
  commands: readonly string[];
  /** The setup allowlist: a wider one may let an install fetch what a narrower one could not. */
  egress: readonly string[];
  /** Names of the secrets given to setup (not their values, which must not be in an image tag). */
  secretNames: readonly string[];
  lockfiles: Readonly<Record<string, string>>;
  /**
   * What decides which files setup may read beyond the lockfiles: the copy's globs and the policy
   * that withholds paths. Setup's output can carry what it read (a build that inlines `.env`), so
   * a result made where a file was readable must not be reused where the policy withholds it.
   */
  readScope: string;
  /**
   * The repository's real path. Setup runs the repository's own files (install scripts, `prepare`
   * builds), which the lockfiles do not cover: a fork with the same lockfiles and a hostile build
   * script must not leave a result that another repository's runs start from.
   */
  repository: string;
}

/** Bump when what the cache holds changes shape, so old entries are not reused. */
const CACHE_FORMAT = 2;

/**
 * The dependency cache's key: the same image, the same setup commands and the same lockfiles give
 * the same result, so a run with a known key starts from that result and skips setup.
 */
export function setupCacheKey(k: SetupKeyInputs): string {
  const canonical = JSON.stringify({
    format: CACHE_FORMAT,
    image: k.runImageId,
    commands: k.commands,
    egress: [...k.egress].sort(),
    secrets: [...k.secretNames].sort(),
    readScope: k.readScope,
    repository: k.repository,
    lockfiles: Object.fromEntries(Object.entries(k.lockfiles).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

/** The cache image for a key: one repository of images, tagged by the key's first 24 hex digits. */
export function setupCacheImage(key: string): string {
  return `gatehouse/setup-cache:${key.slice(0, 24)}`;
}
