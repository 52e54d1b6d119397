import { existsSync, mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/queue-cli';
import { containersOf, logOf, repoIn, startMcpServe, textOf, type McpServe } from '../support/mcp-serve';

/**
 * The ends of an MCP call and of the server itself, through the SDK's Client, the real CLI, real
 * sandboxes and scripted models: a cancelled run call cancels its run (its sandbox removed), a deny
 * with a reason reaches the model and the denied command never runs, a grant of scope `run` covers
 * the same call again, and a server whose stdin closes or that gets SIGTERM cancels its runs and
 * exits 0, no sandbox left.
 */

type Outcome = {
  runId: string;
  outcome: string;
  answer?: string;
  pending: Array<{ runId: string; requestId: string; tool: string; input: unknown; rule: string }>;
  notes: string[];
};
type Started = { runId: string; call: Promise<unknown>; progress: string[] };

const newRoot = (): string => realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-root-')));
const LONG = { timeout: 240_000, resetTimeoutOnProgress: true };
/** Longer than any wait below: a run that was not cancelled is still sleeping when the test looks. */
const SLEEP = 'sleep 100';
const SLEEPER = { turns: [{ toolCalls: [{ name: 'bash', input: { command: SLEEP } }] }, { final: 'Slept.' }] };
/** The run's log as far as it is written (a line being written, or no file yet: not there yet). */
function logSoFar(s: McpServe, runId: string): ReturnType<typeof logOf> {
  try {
    return logOf(s.stateDir, runId);
  } catch {
    return [];
  }
}
const commandOf = (e: { data: Record<string, unknown> }): unknown => (e.data.input as { command?: unknown }).command;

let server: McpServe | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function sleeperServer(): Promise<{ s: McpServe; repo: string }> {
  const root = newRoot();
  const repo = repoIn(root, { 'README.md': '# lifecycle\n' });
  server = await startMcpServe({ script: SLEEPER, policy: { mode: 'sandboxed-auto' }, roots: [root] });
  return { s: server, repo };
}

/** A run call whose command is sleeping in its sandbox (the container is there), bounded. */
async function sleepingRun(s: McpServe, repo: string, signal?: AbortSignal): Promise<Started> {
  const progress: string[] = [];
  const call = s.client.callTool({ name: 'run', arguments: { task: 'sleep a while', repository: repo } }, undefined, {
    ...LONG,
    ...(signal ? { signal } : {}),
    onprogress: (p) => void progress.push(String(p.message)),
  });
  // However the call ends later, the test looks at it itself; never an unhandled rejection.
  call.catch(() => undefined);
  const runs = path.join(s.stateDir, 'runs');
  const sleeping = await waitFor(() => {
    const ids = existsSync(runs) ? readdirSync(runs) : [];
    return (
      ids.length === 1 &&
      logSoFar(s, ids[0]!).some((e) => e.type === 'tool.execution.started' && commandOf(e) === SLEEP)
    );
  }, 120_000);
  expect(sleeping, `the run never started its command; server stderr:\n${s.stderr().slice(-3000)}`).toBe(true);
  const runId = readdirSync(runs)[0]!;
  // The label finds the run's sandbox while it goes: its absence afterwards means it was removed.
  expect(containersOf(runId).length).toBeGreaterThan(0);
  return { runId, call, progress };
}

/** Waits (bounded) for the run's log to end, and returns its last event. */
async function endOf(s: McpServe, runId: string, ms: number) {
  const ended = await waitFor(() => logSoFar(s, runId).at(-1)?.type === 'run.completed', ms);
  expect(ended, `run ${runId} did not end within ${ms} ms; server stderr:\n${s.stderr().slice(-3000)}`).toBe(true);
  return logOf(s.stateDir, runId).at(-1)!;
}

/** The run was cancelled while its command slept: cancelled in its log, the command cut short, no container left. */
async function expectCancelled(s: McpServe, runId: string): Promise<void> {
  const last = await endOf(s, runId, 60_000);
  expect(last.data).toMatchObject({ status: 'cancelled' });
  const log = logOf(s.stateDir, runId);
  // The sleep was cut short (not left to end after 100 s), and the model was not asked for its final answer.
  expect(log.find((e) => e.type === 'tool.execution.completed')?.data.error).toMatchObject({ code: 'cancelled' });
  expect(log.filter((e) => e.type === 'model.request')).toHaveLength(1);
  expect(last.data.answer).toBeUndefined();
  expect(await waitFor(() => containersOf(runId).length === 0, 30_000)).toBe(true);
}

/** The server exits 0 (bounded), and only once its run has ended: the run cancelled, its sandbox already gone. */
async function expectCleanExit(s: McpServe, runId: string): Promise<void> {
  const how = await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('still running'), 90_000))]);
  expect(how, s.stderr().slice(-3000)).toEqual({ code: 0, signal: null });
  expect(logSoFar(s, runId).at(-1)?.type).toBe('run.completed');
  expect(containersOf(runId)).toEqual([]);
  await expectCancelled(s, runId);
}

describe('gatehouse mcp serve: cancellation, denials and shutdown (real CLI, SDK client, real sandboxes)', () => {
  it('a cancelled run call cancels its run: cancelled in its log, no sandbox left, the server up', async () => {
    const { s, repo } = await sleeperServer();
    const abort = new AbortController();
    const { runId, call, progress } = await sleepingRun(s, repo, abort.signal);
    // The caller is told of the run as it goes, up to the command it now cancels.
    expect(
      await waitFor(() => progress.some((m) => m.startsWith('tool.execution.started')), 10_000),
      progress.join(),
    ).toBe(true);
    const t0 = Date.now();
    abort.abort('the caller changed its mind');
    await expect(call).rejects.toThrow();
    await expectCancelled(s, runId);
    // Cancelled well before the 100 s sleep could have ended on its own.
    expect(Date.now() - t0).toBeLessThan(60_000);
    // The server is still serving, and knows the run as cancelled.
    const outcome = async () =>
      ((await s.client.callTool({ name: 'status', arguments: { runId } })).structuredContent as Outcome).outcome;
    // Running until its child has ended (its sandbox removed), then cancelled.
    expect(await waitFor(async () => (await outcome()) === 'cancelled', 30_000)).toBe(true);
    expect(s.process.exitCode).toBeNull();
  }, 300_000);

  it(
    'a deny through approve, with a reason: the command never runs, the model reads the reason, the outcome is ' +
      'returned',
    async () => {
      const root = newRoot();
      const repo = repoIn(root, { 'README.md': '# deny\n' });
      server = await startMcpServe({
        script: {
          turns: [
            { toolCalls: [{ name: 'bash', input: { command: 'touch denied.log' } }] },
            { toolCalls: [{ name: 'bash', input: { command: 'test -e denied.log && echo exists || echo absent' } }] },
            { final: 'denied.log is absent (obs-2).' },
          ],
        },
        policy: { mode: 'sandboxed-auto', ask: ['bash(touch *)'] },
        roots: [root],
      });
      const paused = await server.client.callTool(
        { name: 'run', arguments: { task: 'touch a file', repository: repo } },
        undefined,
        LONG,
      );
      expect(paused.isError, textOf(paused)).toBeFalsy();
      const p = paused.structuredContent as Outcome;
      expect(p.outcome).toBe('paused');
      expect(p.pending).toEqual([expect.objectContaining({ tool: 'bash', input: { command: 'touch denied.log' } })]);
      const reason = 'not in this change: keep the tree clean';
      const done = await server.client.callTool(
        {
          name: 'approve',
          arguments: { runId: p.runId, requestId: p.pending[0]!.requestId, decision: 'deny', reason },
        },
        undefined,
        LONG,
      );
      expect(done.isError, textOf(done)).toBeFalsy();
      expect(done.structuredContent).toMatchObject({
        runId: p.runId,
        outcome: 'final',
        answer: 'denied.log is absent (obs-2).',
        filesChanged: [],
      });
      expect((done.structuredContent as Outcome).notes.join('\n')).toContain(p.pending[0]!.requestId);
      const log = logOf(server.stateDir, p.runId);
      const denied = log.find((e) => e.type === 'approval.denied')!;
      expect(denied).toMatchObject({ actor: 'user', data: { channel: 'cli', reason } });
      expect(String(denied.data.approver)).toMatch(/ for mcp client gatehouse-e2e$/);
      const started = log.filter((e) => e.type === 'tool.execution.started').map(commandOf);
      expect(started).toEqual(['test -e denied.log && echo exists || echo absent']);
      const observations = log.filter((e) => e.type === 'tool.observation');
      expect(observations[0]!.data).toMatchObject({ outcome: 'denied' });
      expect(String(observations[0]!.data.content)).toContain(reason);
      expect(String(observations[1]!.data.content)).toContain('absent');
      expect(existsSync(path.join(repo, 'denied.log'))).toBe(false);
    },
    400_000,
  );

  it('approve with scope run: the same call again in that run is not asked again', async () => {
    const root = newRoot();
    const repo = repoIn(root, { 'README.md': '# scope\n' });
    const twice = { name: 'bash', input: { command: 'echo hi >> run.log' } };
    server = await startMcpServe({
      script: {
        turns: [
          { toolCalls: [twice] },
          { toolCalls: [twice] },
          { toolCalls: [{ name: 'bash', input: { command: 'wc -l < run.log' } }] },
          { final: 'run.log has the lines obs-3 counts.' },
        ],
      },
      policy: { mode: 'sandboxed-auto', ask: ['bash(echo hi*)'] },
      roots: [root],
    });
    const paused = await server.client.callTool(
      { name: 'run', arguments: { task: 'log twice', repository: repo } },
      undefined,
      LONG,
    );
    const p = paused.structuredContent as Outcome;
    expect(p.outcome, textOf(paused)).toBe('paused');
    const done = await server.client.callTool(
      {
        name: 'approve',
        arguments: { runId: p.runId, requestId: p.pending[0]!.requestId, decision: 'approve', scope: 'run' },
      },
      undefined,
      LONG,
    );
    // With scope once, the second call would have paused the run again.
    expect(done.structuredContent, textOf(done)).toMatchObject({ runId: p.runId, outcome: 'final' });
    const log = logOf(server.stateDir, p.runId);
    expect(log.filter((e) => e.type === 'approval.requested')).toHaveLength(1);
    expect(log.find((e) => e.type === 'approval.granted')).toMatchObject({ data: { scope: 'run' } });
    expect(log.filter((e) => e.type === 'tool.execution.started').map(commandOf)).toEqual([
      'echo hi >> run.log',
      'echo hi >> run.log',
      'wc -l < run.log',
    ]);
    expect(String(log.filter((e) => e.type === 'tool.observation')[2]!.data.content)).toMatch(/\n2\n/);
  }, 400_000);

  describe('shutdown: the server cancels the runs going, waits for them and exits 0, no sandbox left', () => {
    it('when its stdin closes', async () => {
      const { s, repo } = await sleeperServer();
      const { runId, call } = await sleepingRun(s, repo);
      s.process.stdin!.end();
      await expectCleanExit(s, runId);
      await expect(call).rejects.toThrow();
    }, 300_000);

    it('on SIGTERM, its stdin still open', async () => {
      const { s, repo } = await sleeperServer();
      const { runId } = await sleepingRun(s, repo);
      expect(s.process.kill('SIGTERM')).toBe(true);
      await expectCleanExit(s, runId);
    }, 300_000);

    // Not tested through the SDK's client.close(): it SIGKILLs the server 4 s after closing its stdin,
    // a bound a loaded machine can miss; the two ways it ends the server are the tests above.
  });
});
