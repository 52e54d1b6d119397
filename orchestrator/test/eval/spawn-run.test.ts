import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliTaskRunner } from '../../src/eval/spawn-run';
import type { EvalTask } from '../../src/eval/suite-schema';

/**
 * The process side of a task with a stand-in for the CLI (a script that behaves as `gatehouse run
 * --json` does at its edges): the run id from the first event, stderr's end, the exit code, and a
 * cancel that reaches the run as one SIGINT.
 */
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fakeCli(body: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-eval-spawn-'));
  made.push(dir);
  const f = path.join(dir, 'fake.mjs');
  writeFileSync(f, body);
  return f;
}
const task: EvalTask = {
  id: 't',
  repository: '/r',
  task: '-x starts with a dash',
  check: 'true',
  model: 'scripted:/s.json',
  modelFrom: 'task',
  budgets: { maxTurns: 2 },
};

describe('cliTaskRunner', () => {
  it('passes the run command line, reads the run id from the first event and keeps the end of stderr', async () => {
    const cli = fakeCli(`
      const args = process.argv.slice(2);
      process.stdout.write(JSON.stringify({ type: 'run.started', runId: 'run_abc', data: { args } }) + '\\n');
      process.stdout.write('{"type":"model.request","runId":"run_other"}\\n'.repeat(2000));
      process.stderr.write('x'.repeat(10000) + 'the end');
      process.exitCode = args.includes('--') && args.at(-1) === '-x starts with a dash' ? 4 : 9;
    `);
    const r = await cliTaskRunner({ node: process.execPath, args: [cli] })(task, { stateDir: '/state' });
    expect(r.runId).toBe('run_abc');
    expect(r.exitCode).toBe(4);
    expect(r.signal).toBeNull();
    expect(r.stderrTail.endsWith('the end')).toBe(true);
    expect(r.stderrTail.length).toBeLessThanOrEqual(4000);
    expect(r.wallMs).toBeGreaterThan(0);
  });

  it('a run that never starts has no run id', async () => {
    const cli = fakeCli(`process.stderr.write('gatehouse: Docker is not running'); process.exitCode = 1;`);
    const r = await cliTaskRunner({ node: process.execPath, args: [cli] })(task, {});
    expect(r).toMatchObject({ runId: null, exitCode: 1, stderrTail: 'gatehouse: Docker is not running' });
  });

  it('cancelling sends the run one SIGINT, and it ends as it chooses', { timeout: 20_000 }, async () => {
    const cli = fakeCli(`
      let n = 0;
      const end = () => { process.stderr.write('SIGINTs: ' + n); process.exit(130); };
      process.on('SIGINT', () => { n++; setTimeout(end, 300); });
      process.stdout.write(JSON.stringify({ type: 'run.started', runId: 'run_c' }) + '\\n');
      setTimeout(() => process.exit(0), 15000);
    `);
    const ac = new AbortController();
    const pending = cliTaskRunner({ node: process.execPath, args: [cli] })(task, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 500));
    ac.abort();
    const r = await pending;
    expect(r).toMatchObject({ runId: 'run_c', exitCode: 130, stderrTail: 'SIGINTs: 1' });
  });
});
