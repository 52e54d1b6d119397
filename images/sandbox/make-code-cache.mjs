// Writes DIR/daemon.cjs.cache, V8's code cache of the bundled daemon (load-daemon.mjs), run by
// assemble-runtime.sh with the runtime's own node: `node make-code-cache.mjs DIR`. The bundle's
// top level runs (its modules initialised, nothing started) so the functions it compiles on the
// way are in the cache too. `node make-code-cache.mjs DIR --check` prints how a fresh node loads
// it (used, rejected, absent): assemble-runtime.sh requires "used".
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadDaemon } from './load-daemon.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node make-code-cache.mjs DIR (the folder holding daemon.cjs)');
  process.exit(2);
}
if (process.argv[3] === '--check') {
  const { codeCache } = loadDaemon(dir);
  process.stdout.write(codeCache);
  process.exit(0);
}
const { script } = loadDaemon(dir, { useCache: false });
writeFileSync(path.join(dir, 'daemon.cjs.cache'), script.createCachedData());
