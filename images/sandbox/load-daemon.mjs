// Loads the bundled daemon (daemon.cjs, scripts/build.mjs) through V8's code cache
// (daemon.cjs.cache), made by make-code-cache.mjs with the node that runs it when the runtime image
// is assembled. Compiling the 1.4 MB bundle afresh cost ~30 ms of every cold start here (on one
// CPU); a cache V8 rejects (another node, other flags, a damaged file) only costs that again: the
// daemon still starts, and its ready log says which it was. Both files come in the runtime's one
// COPY, after anything a toolchain image holds at that path.
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/**
 * Runs the bundle as CommonJS (node's own wrapper, so that the cache made for one load fits the
 * next) and returns its exports, the script (to make a cache from) and how the cache went:
 * `used`, `rejected` or `absent`.
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
