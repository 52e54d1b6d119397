import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureImages } from '@gatehouse/orchestrator';

/**
 * Tests must exercise the daemon as it is in the source tree, not a stale image: rebundle it, then
 * make sure the image for that exact bundle exists (the tag is a hash of the build context).
 */
export default async function setup(): Promise<void> {
  // Once per vitest process: each project (vitest.config.ts) would otherwise run it again.
  if (process.env.GATEHOUSE_TEST_SETUP_DONE === String(process.pid)) return;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  // Runs made by tests anchor their logs with a test key, not the user's (~/.config/gatehouse/log.key).
  process.env.GATEHOUSE_KEY_FILE ||= path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-test-key-')), 'log.key');
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  await ensureImages({ prune: false, log: (m) => process.stderr.write(`[gatehouse] ${m}\n`) });
  process.env.GATEHOUSE_TEST_SETUP_DONE = String(process.pid);
}
