import { LogKey } from './key';

/**
 * The installation's key for READING logs: never created here (a reader that finds no key has
 * nothing to check MACs against), and undefined when there is none. A key file that exists but is
 * unsafe (a symlink, readable by others) still throws: silently not checking would hide that.
 */
export function installationKey(env: Readonly<Record<string, string | undefined>> = process.env): LogKey | undefined {
  try {
    return LogKey.load({ env, create: false });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
