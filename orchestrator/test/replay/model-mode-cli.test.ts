import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Script } from '../../src/providers/scripted';
import { recordRun, scriptFile, snapshot } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-key-')), 'log.key');

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000, env: process.env });

const READ = { name: 'read_file', input: { path: 'a.txt' } };
const RECORDED: Script = { turns: [{ toolCalls: [READ] }, { final: 'It says hi.' }] };

/** The exit codes of `gatehouse replay --mode model` (the real CLI; nothing here needs Docker). */
describe('gatehouse replay --mode model', () => {
  it('exits 0 on a match, 1 on a divergence, 2 without --model (writing nothing)', async () => {
    // The run's repository: a replay must leave it byte for byte as it was (files and all of .git).
    const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-repo-'));
    writeFileSync(path.join(repo, 'a.txt'), 'hi\n');
    const git = (args: string[]) =>
      execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    git(['init', '-q']);
    git(['add', '-A']);
    git(['commit', '-q', '-m', 'start']);
    const before = snapshot(repo);
    const rec = await recordRun(RECORDED, { 'a.txt': 'hi\n' }, undefined, repo);
    const base = ['replay', rec.runId, '--mode', 'model', '--state-dir', rec.stateDir];

    const same = gatehouse([...base, '--model', `scripted:${scriptFile(RECORDED)}`]);
    expect(same.stderr).toBe('');
    expect(same.status).toBe(0);
    expect(same.stdout).toMatch(/: match: 2 compared, 0 differed/);

    const other = gatehouse([...base, '--model', `scripted:${scriptFile({ turns: [{ final: 'no' }] })}`, '--json']);
    expect(other.status).toBe(1);
    const types = other.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual([
      'run.started',
      'model.request',
      'model.output',
      'replay.divergence',
      'replay.summary',
      'run.completed',
    ]);

    const runs = readdirSync(path.join(rec.stateDir, 'runs')).sort();
    const missing = gatehouse(base);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--model/);
    expect(readdirSync(path.join(rec.stateDir, 'runs')).sort()).toEqual(runs);
    expect(snapshot(repo)).toEqual(before);
  });
});
