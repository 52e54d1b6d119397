import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A cost budget through the real CLI, a real sandbox and the scripted model, priced by the trusted
 * config: the run stops `partial` (exit 4) on it with its changes exported to the diff, resume with
 * the same budget is refused, and `resume --max-cost` with more finishes it, the cost counted over
 * the whole run.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const temps: string[] = [];
const temp = (prefix: string): string => {
  const d = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

type Event = { type: string; runId: string; data: Record<string, unknown> };
const parse = (stdout: string): Event[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);

describe('--max-cost (real CLI, real sandbox, scripted model priced by the config)', () => {
  it('stops partial with the changes kept; resume --max-cost with more finishes the run', () => {
    const repo = temp('gh-cost-repo-');
    writeFileSync(path.join(repo, 'README.md'), '# cost\n');
    const stateDir = temp('gh-cost-state-');
    const dir = temp('gh-cost-script-');
    // Each write carries 4000 characters: 1000 output tokens, $1 at $1000 per million (input is free).
    const big = (c: string) => c.repeat(4000);
    const script = path.join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: big('a') } }] },
          { toolCalls: [{ name: 'write_file', input: { path: 'b.txt', content: big('b') } }] },
          { final: 'Wrote a.txt (obs-1) and b.txt (obs-2).' },
        ],
      }),
    );
    const config = path.join(dir, 'trusted.json');
    writeFileSync(config, JSON.stringify({ prices: { 'scripted:*': { input: 0, output: 1000 } } }));
    const gatehouse = (args: string[]) =>
      spawnSync(process.execPath, [cli, ...args, '--state-dir', stateDir], {
        cwd: repo,
        encoding: 'utf8',
        timeout: 180_000,
        input: '',
        env: { ...process.env, CI: 'true' },
      });
    const model = ['--model', `scripted:${script}`, '--mode', 'sandboxed-auto'];

    // Without a price, a cost budget is refused before anything starts, saying how to add one.
    const unpriced = gatehouse(['run', 'write two files', ...model, '--max-cost', '1.5']);
    expect(unpriced.status, unpriced.stderr).toBe(2);
    expect(unpriced.stderr).toMatch(/needs the price of scripted:.*"prices"/s);

    const first = gatehouse(['run', 'write two files', ...model, '--config', config, '--max-cost', '1.5', '--json']);
    expect(first.status, first.stderr).toBe(4);
    const events = parse(first.stdout);
    const runId = events[0]!.runId;
    expect(events[0]!.data).toMatchObject({
      budgets: { maxCostUsd: 1.5 },
      price: { input: 0, output: 1000, source: config },
    });
    const outputs = events.filter((e) => e.type === 'model.output');
    expect(outputs).toHaveLength(2);
    for (const o of outputs) expect((o.data.usage as { costUsd: number }).costUsd).toBeCloseTo(1, 1);
    const stopped = events.at(-1)!;
    expect(stopped.type).toBe('run.completed');
    expect(stopped.data).toMatchObject({
      status: 'partial',
      stopReason: 'cost_budget',
      decidedBy: 'budget',
      filesChanged: ['a.txt', 'b.txt'],
      applied: false,
    });
    const usage = stopped.data.usage as { inputTokens: number; outputTokens: number; costUsd: number };
    expect(usage.outputTokens).toBeGreaterThanOrEqual(2000);
    expect(usage.costUsd).toBeCloseTo(2.0, 1);
    // The changes are kept: exported to the run's diff, the repository untouched.
    const diff = readFileSync(path.join(stateDir, 'runs', runId, String(stopped.data.diffFile)), 'utf8');
    expect(diff).toContain('a.txt');
    expect(diff).toContain('b.txt');
    expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('# cost\n');

    // With the budget it stopped on, resuming would stop again at once: refused, naming the flag.
    const same = gatehouse(['resume', runId]);
    expect(same.status).toBe(1);
    expect(same.stderr).toMatch(/cost_budget is still spent .*\$2\.0\d* of \$1\.5.*--max-cost/);

    const more = gatehouse(['resume', runId, '--max-cost', '5', '--json']);
    expect(more.status, more.stderr).toBe(0);
    const resumed = parse(more.stdout);
    const done = resumed.at(-1)!;
    expect(done.type).toBe('run.completed');
    expect(done.data).toMatchObject({ status: 'final', filesChanged: ['a.txt', 'b.txt'] });
    expect(done.data).not.toHaveProperty('decidedBy', 'budget');
    // The whole run's cost: the two writes and the answer, across the stop and the resume.
    const total = done.data.usage as { costUsd: number; outputTokens: number };
    expect(total.costUsd).toBeGreaterThan(usage.costUsd);
    expect(total.outputTokens).toBeGreaterThan(usage.outputTokens);
    const again = resumed.filter((e) => e.type === 'run.resumed');
    expect(again).toHaveLength(1);
    // The raised budget is on record: a later resume keeps it.
    expect(again[0]!.data.budgets).toMatchObject({ maxCostUsd: 5 });

    const show = gatehouse(['show', runId]);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/decided by budget/);
    expect(show.stdout).toMatch(new RegExp(`usage: [\\d,]+ tokens in, [\\d,]+ out, \\$${total.costUsd.toFixed(4)}`));
  });
});
