import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { narrowingPolicies } from '../../src/mcp-server/narrowing-policies';
import { loadShellClassifier } from '../../src/policy/shell/index';

/**
 * Red team (issue 17): the repository a caller names is hostile. Its `.gatehouse` files are read by
 * the server itself, synchronously, before any run starts: a FIFO there would block the whole
 * server (every caller, and its shutdown), and a huge file would fill its memory.
 */
describe("mcp serve: a repository's .gatehouse files must be small regular files", () => {
  function repo(): string {
    const d = mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-narrow-'));
    mkdirSync(path.join(d, '.gatehouse'));
    return d;
  }

  /** Opens the FIFO for writing after a moment and closes it, so a reader that blocks is released (bounded). */
  function releaseLater(fifo: string): void {
    spawn('timeout', ['8', 'sh', '-c', `sleep 2; exec 3>'${fifo}'`], { stdio: 'ignore' }).unref();
  }

  for (const name of ['policy.json', 'config.json']) {
    it(`a FIFO at .gatehouse/${name} is refused at once, not read`, async () => {
      const classifier = await loadShellClassifier();
      const d = repo();
      const fifo = path.join(d, '.gatehouse', name);
      execFileSync('mkfifo', [fifo]);
      releaseLater(fifo);
      const started = Date.now();
      expect(() => narrowingPolicies(d, undefined, classifier)).toThrow(/not a regular file/);
      expect(Date.now() - started).toBeLessThan(1500);
    });
  }

  it('a policy file over 1 MiB is refused without being read', async () => {
    const classifier = await loadShellClassifier();
    const d = repo();
    writeFileSync(path.join(d, '.gatehouse', 'policy.json'), `{"deny": []${' '.repeat(2 * 1024 * 1024)}}`);
    expect(() => narrowingPolicies(d, undefined, classifier)).toThrow(/at most 1048576 bytes/);
  });
});
