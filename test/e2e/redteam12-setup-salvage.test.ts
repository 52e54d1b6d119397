import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cleanScratch, gitRepo, scratch } from '../support/setup-phase';

/**
 * Red team (issue 12): the orchestrator dies while setup runs (SIGKILL). The reaper saves an
 * orphaned sandbox's workspace into its run's folder so that resume can restore it; a setup
 * sandbox's workspace holds what setup wrote with its secrets (a project .npmrc with the registry
 * token, as `npm config set --location=project` writes it). It must never be saved: not on the
 * host's disk in the run's folder, not restored into the agent's sandbox by resume.
 */
const secret = 'gh-salvage-secret-7c6b5a4d3e';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

function docker(args: string[]): string {
  return spawnSync('docker', args, { encoding: 'utf8', timeout: 30_000 }).stdout ?? '';
}

afterAll(() => cleanScratch());

describe('a setup sandbox orphaned by a crash (red team)', () => {
  it('is reaped without its workspace being saved, so its secrets stay out of the run folder and resume', async () => {
    const repo = gitRepo({ 'README.md': '# r\n' });
    const stateDir = scratch('gh-rt12-state-');
    const cfg = path.join(scratch(), 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        policy: { allow: ['bash'] },
        setup: ['echo "//registry.example/:_authToken=$GH_SALVAGE_SECRET" > .npmrc && sleep 60'],
      }),
    );
    const script = path.join(scratch(), 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ final: 'nothing to do' }] }));
    const child = spawn(
      process.execPath,
      [
        ...[CLI, 'run', 'task', '--state-dir', stateDir, '--repo', repo, '--config', cfg],
        ...['--model', `scripted:${script}`, '--setup-env', 'GH_SALVAGE_SECRET'],
      ],
      {
        env: { ...process.env, CI: 'true', GH_SALVAGE_SECRET: secret },
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    );
    // Wait (bounded) for setup to have written its file, then kill the orchestrator outright.
    let container = '';
    for (let i = 0; i < 240 && container === ''; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const runs = (() => {
        try {
          return readdirSync(path.join(stateDir, 'runs'));
        } catch {
          return [];
        }
      })();
      for (const runId of runs) {
        const id = docker([
          'ps',
          '-q',
          '--filter',
          `label=gatehouse.run=${runId}`,
          '--filter',
          'label=gatehouse.role=sandbox',
        ])
          .trim()
          .split('\n')[0];
        if (id && docker(['exec', id, 'cat', '/workspace/.npmrc']).includes(secret)) container = id;
      }
    }
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited; // reaped, so the owner label names a dead process
    expect(container, 'setup never wrote its .npmrc').not.toBe('');
    const runId = readdirSync(path.join(stateDir, 'runs'))[0]!;

    const reaped = spawnSync(process.execPath, [CLI, 'sandbox', 'reap', '--run', runId], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(reaped.status, reaped.stderr).toBe(0);
    const report = JSON.parse(reaped.stdout) as {
      salvaged: Array<{ runId: string }>;
      unsaved: Array<{ runId: string; reason: string }>;
    };
    expect(report.unsaved).toContainEqual({ runId, reason: expect.stringMatching(/setup sandbox/) as unknown });
    for (const f of filesUnder(path.join(stateDir, 'runs', runId)))
      expect(readFileSync(f, 'latin1').includes(secret), f).toBe(false);
    expect(report.salvaged.filter((s) => s.runId === runId)).toEqual([]);
    expect(docker(['ps', '-aq', '--filter', `label=gatehouse.run=${runId}`]).trim()).toBe('');
  }, 300_000);
});
