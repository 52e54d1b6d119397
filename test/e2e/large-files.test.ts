import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Large files in the workspace (item 8): the export streams them (never through NATS or memory),
 * or, over the configured limit, lists them with their sizes; either way the accepted run stays
 * final and the other changes are applied.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
type Event = { type: string; data: Record<string, unknown>; runId: string };

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-large-'));
  writeFileSync(path.join(dir, 'notes.txt'), 'before\n');
  return dir;
}

function runWith(dir: string, command: string, env: NodeJS.ProcessEnv = {}) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-large-run-'));
  writeFileSync(path.join(tmp, 'policy.json'), JSON.stringify({ mode: 'sandboxed-auto' }));
  writeFileSync(
    path.join(tmp, 'script.json'),
    JSON.stringify({
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: `echo after > notes.txt && ${command} && ls -l` } }] },
        { final: 'Made the files listed in obs-1.' },
      ],
    }),
  );
  const stateDir = path.join(tmp, 'state');
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'run',
      'x',
      '--repo',
      dir,
      '--model',
      `scripted:${path.join(tmp, 'script.json')}`,
      '--policy',
      path.join(tmp, 'policy.json'),
      '--apply',
      '--json',
      '--state-dir',
      stateDir,
    ],
    {
      encoding: 'utf8',
      timeout: 600_000,
      env: { ...process.env, CI: 'true', ...env },
      input: '',
    },
  );
  const events = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
  return { r, events, completed: events.at(-1)!, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

describe('large files in the workspace (real CLI, real sandbox)', () => {
  it('the default handles a 1.5 GB file: exported, applied with the other change, the run stays final', () => {
    const dir = repo();
    const out = runWith(dir, 'truncate -s 1500M big.bin');
    try {
      expect(out.completed, out.r.stderr).toMatchObject({
        type: 'run.completed',
        data: { status: 'final', applied: true, filesChanged: ['big.bin', 'notes.txt'] },
      });
      expect(out.completed.data.skipped).toBeUndefined();
      expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('after\n');
      expect(statSync(path.join(dir, 'big.bin')).size).toBe(1500 * 1024 * 1024);
      // The checkpoint after the command saved it too (resume could put it back).
      const checkpoints = out.events.filter((e) => e.type === 'workspace.checkpoint');
      expect(checkpoints.at(-1)!.data).toMatchObject({ files: 2, skipped: [] });
    } finally {
      out.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  it(
    'over a configured limit: the file is listed with its size, ' + 'everything else is applied, the run stays final',
    () => {
      const dir = repo();
      const out = runWith(dir, 'head -c 2000000 /dev/zero > big.bin', { GATEHOUSE_MAX_FILE_BYTES: '1000000' });
      expect(out.completed, out.r.stderr).toMatchObject({
        type: 'run.completed',
        data: {
          status: 'final',
          applied: true,
          skipped: [{ path: 'big.bin', size: 2000000, reason: 'larger than 1000000 bytes' }],
        },
      });
      expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('after\n');
      expect(() => statSync(path.join(dir, 'big.bin'))).toThrow();
      out.cleanup();
    },
  );
});
