// The daemon's entry point in every sandbox (/opt/gatehouse/agent.mjs): it runs the bundled daemon
// (daemon.cjs, scripts/build.mjs) through V8's code cache (daemon.cjs.cache), made by
// make-code-cache.mjs with this same node when the runtime image was assembled. Compiling the
// 1.4 MB bundle afresh cost ~30 ms of every cold start here (on one CPU); a cache V8 rejects (another
// node, other flags) only costs that again: the daemon still starts, and says so in its ready log.
// Both files come in the runtime's one COPY, after anything a toolchain image holds at that path.
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

/**
 * Loads the bundle as CommonJS (node's own wrapper, so the cache made for one load fits the other)
 * and returns its exports, the script (to make a cache from) and whether the cache was used.
 */
export function loadDaemon(dir, { useCache = true } = {}) {
  const file = path.join(dir, 'daemon.cjs');
  const source = readFileSync(file, 'utf8');
  let cachedData;
  if (useCache) {
    try {
      cachedData = readFileSync(`${file}.cache`);
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, dir);
  const codeCache = cachedData === undefined ? 'absent' : script.cachedDataRejected ? 'rejected' : 'used';
  return { exports: module.exports, script, codeCache };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { exports, codeCache } = loadDaemon(path.dirname(fileURLToPath(import.meta.url)));
  exports.runDaemon({ codeCache });
}
