import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, type Event, repo, scriptFile, why, handoff } from '../support/delegation';

/**
 * Sub-agents through the real CLI: cancelling the parent stops every child.
 */
describe('sub-agents (real CLI, real sandboxes)', () => {
  it('cancelling the parent stops every child and leaves no container behind', async () => {
    const dir = repo({ 'src/a.js': 'x\n' });
    const slow = { turns: [{ toolCalls: [{ name: 'bash', input: { command: 'sleep 60' } }] }, { final: 'slept' }] };
    const script = {
      turns: [{ toolCalls: [handoff('sleep', ['bash'], ['**']), handoff('sleep', ['bash'], ['**'])] }, { final: 'x' }],
      children: [slow, slow],
    };
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
    const child = spawn(
      process.execPath,
      [
        cli,
        'run',
        'x',
        '--repo',
        dir,
        '--model',
        `scripted:${scriptFile(script)}`,
        '--json',
        '--state-dir',
        stateDir,
        '--mode',
        'sandboxed-auto',
      ],
      { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const sleeping = new Promise<void>((resolve) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if ((out.match(/"primitive":"exec"/g) ?? []).length >= 2) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    // A run that ends before both children sleep fails here with how it ended, not by timing out.
    const first = await Promise.race([sleeping.then(() => 'sleeping' as const), exited.then(() => 'exited' as const)]);
    const printed = () =>
      out
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Event);
    expect(first, first === 'exited' ? why(err, printed()) : '').toBe('sleeping');
    child.kill('SIGINT');
    const code = await exited;
    clearTimeout(killer);
    expect(code).toBe(130);
    const runIds = readdirSync(path.join(stateDir, 'runs'));
    expect(runIds).toHaveLength(3);
    for (const id of runIds) {
      const events = readFileSync(path.join(stateDir, 'runs', id, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Event);
      expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'cancelled' } });
      const left = spawnSync('docker', ['ps', '-aq', '--filter', `label=gatehouse.run=${id}`], { encoding: 'utf8' });
      expect(left.stdout.trim()).toBe('');
    }
  });
});
