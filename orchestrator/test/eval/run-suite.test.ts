import { describe, expect, it } from 'vitest';
import { runSuite } from '../../src/eval/run-suite';
import { runArgs, type SpawnedRun, type TaskRunner } from '../../src/eval/spawn-run';
import { EvalReport, median, summarise, type EvalTaskResult } from '../../src/eval/eval-report';
import type { EvalTask, Suite } from '../../src/eval/suite-schema';

/**
 * The scheduling and the arithmetic, with a stand-in runner whose runs never start (the results of
 * real runs come from their logs: test/e2e/eval-cli.test.ts).
 */
const task = (id: string, extra: Partial<EvalTask> = {}): EvalTask => ({
  id,
  repository: '/nowhere',
  task: `do ${id}`,
  check: 'npm test',
  model: 'scripted:/s.json',
  modelFrom: 'task',
  budgets: {},
  ...extra,
});
const suite = (n: number): Suite => ({
  file: '/s/suite.json',
  name: null,
  tasks: Array.from({ length: n }, (_, i) => task(`t${i}`)),
});
const noRun = (stderrTail: string): SpawnedRun => ({ runId: null, exitCode: 2, signal: null, stderrTail, wallMs: 5 });

describe('runSuite', () => {
  it('runs at most N at once, and reports in the suite order whatever order they end in', async () => {
    let inFlight = 0;
    let most = 0;
    const ended: string[] = [];
    const runTask: TaskRunner = async (t) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Later tasks end sooner: the report must still follow the suite.
      await new Promise((r) => setTimeout(r, 40 - Number(t.id.slice(1)) * 5));
      inFlight--;
      ended.push(t.id);
      return noRun(`no ${t.id}`);
    };
    const seen: number[] = [];
    const r = await runSuite(suite(6), { runTask, concurrency: 2, onResult: (_r, done) => seen.push(done) });
    expect(most).toBe(2);
    expect(ended).not.toEqual(['t0', 't1', 't2', 't3', 't4', 't5']);
    expect(r.tasks.map((t) => t.id)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5']);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.tasks[3]).toMatchObject({ passed: false, status: 'error', reason: 'error', runId: null, exitCode: 2 });
    expect(r.tasks[3]!.error).toBe('no t3 (exit 2)');
    expect(EvalReport.parse(r)).toEqual(r);
    expect(r.totals).toMatchObject({ tasks: 6, passed: 0, failed: 6, passRate: 0, costUsd: null, costUnknown: 0 });
    expect(r.medians.turns).toBeNull();
  });

  it('cancelled: the running tasks are told (their runs end cancelled), the rest never start', async () => {
    const ac = new AbortController();
    const signals: boolean[] = [];
    const runTask: TaskRunner = async (_t, o) => {
      ac.abort();
      signals.push(o.signal?.aborted ?? false);
      return noRun('cancelled');
    };
    const r = await runSuite(suite(3), { runTask, concurrency: 1, signal: ac.signal });
    expect(signals).toEqual([true]);
    // The first one was told, and its run had not started: not run either, rather than an error.
    expect(r.tasks.map((t) => [t.status, t.reason])).toEqual([
      ['not_run', 'cancelled'],
      ['not_run', 'cancelled'],
      ['not_run', 'cancelled'],
    ]);
  });

  it('a runner that cannot start the process is that task’s error, not the suite’s', async () => {
    const runTask: TaskRunner = (t) =>
      t.id === 't1' ? Promise.reject(new Error('spawn ENOENT')) : Promise.resolve(noRun('x'));
    const r = await runSuite(suite(3), { runTask, concurrency: 3 });
    expect(r.tasks.map((t) => t.status)).toEqual(['error', 'error', 'error']);
    expect(r.tasks[1]!.error).toContain('spawn ENOENT');
  });
});

describe('runArgs: a task as the gatehouse run command line', () => {
  it('headless, its check as --check, its budgets as flags, never --apply, the task after --', () => {
    const args = runArgs(
      task('x', {
        task: '--apply everything',
        config: '/c.json',
        policy: '/p.json',
        budgets: { maxTurns: 3, maxToolCalls: 4, maxTokens: 500, wallClockSeconds: 90, maxCostUsd: 0.5 },
      }),
      { stateDir: '/state' },
    );
    expect(args).toEqual([
      'run',
      '--repo',
      '/nowhere',
      '--model',
      'scripted:/s.json',
      '--check',
      'npm test',
      '--on-ask',
      'pause',
      '--json',
      '--config',
      '/c.json',
      '--policy',
      '/p.json',
      '--max-turns',
      '3',
      '--max-tool-calls',
      '4',
      '--max-tokens',
      '500',
      '--max-wall',
      '90s',
      '--max-cost',
      '0.5',
      '--state-dir',
      '/state',
      '--',
      '--apply everything',
    ]);
    expect(args.indexOf('--apply')).toBe(-1);
  });
});

describe('summarise', () => {
  const result = (over: Partial<EvalTaskResult>): EvalTaskResult => ({
    id: 'x',
    passed: false,
    reason: 'check_failed',
    status: 'partial',
    stopReason: 'check_failed',
    decidedBy: 'check',
    check: 'failed',
    turns: 0,
    toolCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    costUsd: null,
    wallMs: 0,
    runId: 'run_x',
    exitCode: 4,
    model: 'm',
    error: null,
    ...over,
  });

  it('sums, pass rate, medians over the runs that started; a cost only from the tasks that have one', () => {
    const s = summarise([
      result({
        passed: true,
        reason: null,
        turns: 2,
        toolCalls: 3,
        inputTokens: 100,
        outputTokens: 10,
        costUsd: 0.5,
        wallMs: 1000,
      }),
      result({ turns: 4, toolCalls: 5, inputTokens: 300, outputTokens: 30, costUsd: 1.5, wallMs: 3000 }),
      result({ turns: 9, toolCalls: 1, inputTokens: 200, outputTokens: 20, wallMs: 2000 }),
      result({ runId: null, status: 'error', wallMs: 10 }),
    ]);
    expect(s.totals).toEqual({
      tasks: 4,
      passed: 1,
      failed: 3,
      passRate: 0.25,
      turns: 15,
      toolCalls: 9,
      inputTokens: 600,
      outputTokens: 60,
      cachedInputTokens: 0,
      costUsd: 2,
      costUnknown: 1,
      wallMs: 6010,
    });
    expect(s.medians).toEqual({ turns: 4, toolCalls: 3, inputTokens: 200, outputTokens: 20, costUsd: 1, wallMs: 2000 });
  });

  it('median: the middle one, or the mean of the middle two; none of nothing', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });
});
