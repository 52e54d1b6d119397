import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureImages } from '@gatehouse/orchestrator';

/**
 * Tests must exercise the daemon as it is in the source tree, not a stale image: rebundle it, then
 * make sure the image for that exact bundle exists (the tag is a hash of the build context).
 */
export default async function setup(): Promise<void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  await ensureImages({ prune: false, log: (m) => process.stderr.write(`[gatehouse] ${m}\n`) });
}
