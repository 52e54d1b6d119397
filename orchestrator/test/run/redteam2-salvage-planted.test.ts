import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseWorkspace } from '../../src/run/restore-point';
import type { ToolRegistry } from '../../src/tools/registry';

/**
 * Second red team, issue 10: resume restores a reaper salvage (`workspace/salvage-SEQ.json`) chosen
 * by its file name alone. Unlike a checkpoint, whose manifest hash is recorded in a MAC'd
 * `workspace.checkpoint` event, nothing in the anchored log vouches for a salvage, so anyone who
 * can write the run's folder (the very party `verify` guards against) can plant one with a large
 * SEQ, and resume puts its files into the workspace (and a later --apply onto the host) as if the
 * run had written them; `verify` still says intact. What SHOULD hold: an unvouched salvage is not
 * restored (for example: refused unless its hash is recorded in the log or signed with the key).
 */
describe('red team 2: a planted salvage manifest', () => {
  it('is not restored when nothing in the log vouches for it', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt2-salvage-'));
    const content = 'never written by the run\n';
    const sha = createHash('sha256').update(content).digest('hex');
    mkdirSync(path.join(runDir, 'workspace/blobs'), { recursive: true });
    writeFileSync(path.join(runDir, 'workspace/blobs', sha), content);
    const manifest = {
      v: 1,
      files: [{ path: 'src/backdoor.ts', kind: 'file', sha256: sha, size: content.length, mode: 0o644, uid: 10001 }],
      deleted: [],
      skipped: [],
    };
    writeFileSync(path.join(runDir, 'workspace/salvage-999999.json'), `${JSON.stringify(manifest)}\n`);
    const point = await chooseWorkspace(runDir, [], {} as ToolRegistry);
    expect('files' in point ? point.files : []).not.toContain('src/backdoor.ts');
  });
});
