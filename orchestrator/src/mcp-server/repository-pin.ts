import { lstatSync, realpathSync } from 'node:fs';
import { McpRequestError } from './allowed-path';

/**
 * What `gatehouse mcp serve` checked a repository as: its real path (allowed-path.ts) and the
 * identity (device and inode) of the folder there, as `DEV:INO`. The run's child is given both
 * (`gatehouse run --repo REAL --repo-pin DEV:INO`) and refuses to start unless the path still
 * leads, through no symbolic link, to that same folder: a caller who swaps a folder on the path for
 * a link (to a folder outside the roots) between the server's check and the run is refused.
 */
export function repositoryPin(real: string): string {
  const st = lstatSync(real, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

/** Throws McpRequestError when `repo` is no longer the real path of the folder `pin` names. */
export function checkRepositoryPin(repo: string, pin: string): void {
  let real: string | undefined;
  let now: string | undefined;
  try {
    real = realpathSync(repo);
    now = repositoryPin(repo);
  } catch {
    // said below
  }
  if (real === repo && now === pin) return;
  const why =
    real === undefined
      ? 'it is gone'
      : real !== repo
        ? `a symbolic link on its path now leads to ${real}`
        : 'another folder is there now';
  throw new McpRequestError(
    `the repository ${repo} changed after the server checked it (${why}); nothing was run. Name a repository ` +
      'that stays where it is',
  );
}
