import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The gatehouse this code runs from: a checkout, or the installed npm package (both hold images/
 * and scripts/lib.sh at their root; docs/decisions/0007-published-package.md). Found by walking up
 * from this module, because the same code runs bundled (orchestrator/dist, in a checkout or under
 * an npm prefix's lib/node_modules) and from source (vitest); never from the working directory.
 */
export function projectRoot(): string {
  if (process.env.GATEHOUSE_HOME_DIR) return process.env.GATEHOUSE_HOME_DIR;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 10; i++) {
    if (existsSync(path.join(dir, 'images', 'sandbox', 'assemble-runtime.sh'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error(
    "cannot find gatehouse's own files (images/sandbox/assemble-runtime.sh) above this program: reinstall it " +
      '(npm install -g gatehouse-cli, or the tarball) or set GATEHOUSE_HOME_DIR to a gatehouse checkout',
  );
}

/**
 * `checkout` where the sources are there to rebuild from (scripts/build.mjs), `package` for an
 * installed tarball, which ships only the bundles: it decides what doctor tells a person to run.
 */
export function installKind(root = projectRoot()): 'checkout' | 'package' {
  return existsSync(path.join(root, 'scripts', 'build.mjs')) ? 'checkout' : 'package';
}

/** The version in the package.json at projectRoot(): the checkout's or the installed package's. */
export function packageVersion(root = projectRoot()): string {
  try {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
