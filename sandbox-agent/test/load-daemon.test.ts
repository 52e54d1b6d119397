import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDaemon } from '../../images/sandbox/load-daemon.mjs';

/**
 * A stand-in bundle: CommonJS, a builtin required, exports like daemon.cjs's. Each has its own text
 * (its folder in a comment): V8 keeps compiled scripts by source within a process, and would take a
 * second load of the same text from there without reading any cache.
 */
function bundleDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-load-daemon-'));
  const body = Array.from({ length: 200 }, (_, i) => `function f${i}(x) { return x * ${i} + path.sep.length; }`);
  writeFileSync(
    path.join(dir, 'daemon.cjs'),
    `// ${dir}\nconst path = require('node:path');\n${body.join('\n')}\n` +
      `module.exports = { answer: f3(14), file: __filename, runDaemon() {} };\n`,
  );
  return dir;
}

describe('loadDaemon (the daemon bundle through V8 code cache)', () => {
  it('runs the bundle with no cache, and says so', () => {
    const dir = bundleDir();
    const loaded = loadDaemon(dir);
    expect(loaded.codeCache).toBe('absent');
    expect(loaded.exports).toMatchObject({ answer: 43, file: path.join(dir, 'daemon.cjs') });
  });

  it('uses a cache made from a load of the same bundle', () => {
    const dir = bundleDir();
    writeFileSync(path.join(dir, 'daemon.cjs.cache'), loadDaemon(dir, { useCache: false }).script.createCachedData());
    const loaded = loadDaemon(dir);
    expect(loaded.codeCache).toBe('used');
    expect(loaded.exports.answer).toBe(43);
  });

  it('still runs the bundle when the cache is damaged or made for other code, and says it was rejected', () => {
    const dir = bundleDir();
    writeFileSync(path.join(dir, 'daemon.cjs.cache'), Buffer.alloc(4096, 7));
    expect(loadDaemon(dir)).toMatchObject({ codeCache: 'rejected', exports: { answer: 43 } });
    const other = bundleDir();
    writeFileSync(path.join(other, 'daemon.cjs'), `// ${other}\nmodule.exports = { answer: 1 };\n`);
    const fresh = bundleDir(); // a bundle not loaded yet in this process
    writeFileSync(path.join(fresh, 'daemon.cjs.cache'), loadDaemon(other).script.createCachedData());
    expect(loadDaemon(fresh)).toMatchObject({ codeCache: 'rejected', exports: { answer: 43 } });
  });
});
