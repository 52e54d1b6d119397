import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { checkFinalAnswer, compileContext } from '../../src/index';
import { evidenceFrom } from '../../src/loop/evidence';
import { TestLog } from '../../src/testing/index';

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

/**
 * A run's log as the pipeline writes it: obs-1 `npm test` exit 1, obs-2 an edit of src/add.js,
 * obs-3 `npm test` exit 0, obs-4 a denied edit of index.js (no execution), obs-5 a sub-agent whose
 * file reached this workspace through the delegator's own write (obs-6).
 */
function runLog(): TestLog {
  const log = new TestLog();
  logs.push(log);
  log.append('run.started', 'user', {
    task: 't',
    mode: 'sandboxed-auto',
    surface: [],
    config: {
      source: 'test',
      sha256: '0'.repeat(64),
      ignored: [],
      environment: {
        image: 'x',
        setup: [],
        check: './ci/check.sh',
        egress: { setup: [], agent: [], deny: [] },
        copy: { exclude: [], include: [] },
        limits: {},
        setupSecrets: [],
      },
    },
  });
  let n = 0;
  const call = (
    callId: string,
    tool: string,
    input: unknown,
    outcome: 'ok' | 'failed' | 'denied',
    ran?: { exitCode: number | null; filesChanged: string[] },
  ) => {
    log.append('tool.intent', 'model', { callId, turn: 1, tool, input });
    log.append('tool.validation', 'runtime', { callId, ok: true, stage: 'semantic', errors: [], input });
    if (ran)
      log.append('tool.execution.completed', 'sandbox', {
        callId,
        invocationId: `inv-${callId}`,
        status: outcome === 'ok' ? 'ok' : 'failed',
        signal: null,
        durationMs: 1,
        bytes: 0,
        truncated: false,
        artifactRefs: [],
        ...ran,
      });
    log.append('tool.observation', 'runtime', {
      callId,
      observationId: `obs-${++n}`,
      tool,
      outcome,
      content: '',
      truncated: false,
    });
  };
  call('c1', 'bash', { command: 'npm test' }, 'failed', { exitCode: 1, filesChanged: [] });
  call('c2', 'edit_file', { path: './src/add.js' }, 'ok', { exitCode: null, filesChanged: ['src/add.js'] });
  call('c3', 'bash', { command: 'npm test' }, 'ok', { exitCode: 0, filesChanged: [] });
  call('c4', 'edit_file', { path: 'index.js' }, 'denied');
  call('c5', 'delegate', { task: 'x' }, 'ok', { exitCode: null, filesChanged: [] });
  call('c5.write1', 'write_file', { path: 'lib/b.js' }, 'ok', { exitCode: null, filesChanged: ['lib/b.js'] });
  call('c7', 'bash', { command: './ci/check.sh' }, 'ok', { exitCode: 0, filesChanged: [] });
  return log;
}

describe('output contract, judged from the log', () => {
  it.each([
    ['Fixed add() (obs-2); the tests pass (obs-3).', true],
    ['The repository has two source files.', true],
    ['I fixed it and the tests pass.', false],
    ['They pass (obs-1).', false],
    ['The tests pass (obs-9).', false],
    ['I ran the tests (obs-1); they still fail.', true],
    ['Fixed index.js (obs-4).', false],
    ['The sub-agent added lib/b.js (obs-5).', true],
    ['The configured check passes (obs-7).', true],
  ])('%s -> accepted: %s', (answer, ok) => {
    const verdict = checkFinalAnswer(answer, runLog().events());
    expect(verdict.ok).toBe(ok);
  });

  it("folds each observation's tool, outcome, command, exit code and changed files from the events", () => {
    const e = evidenceFrom(runLog().events());
    expect(e.checkCommand).toBe('./ci/check.sh');
    expect([...e.changed].sort()).toEqual(['lib/b.js', 'src/add.js']);
    expect(e.observations.get('obs-1')).toEqual({
      id: 'obs-1',
      callId: 'c1',
      tool: 'bash',
      outcome: 'failed',
      command: 'npm test',
      exitCode: 1,
      changed: [],
    });
    expect(e.observations.get('obs-4')).toEqual({
      id: 'obs-4',
      callId: 'c4',
      tool: 'edit_file',
      outcome: 'denied',
      changed: [],
    });
    expect(e.observations.get('obs-5')?.changed).toEqual(['lib/b.js']);
  });
});

describe('context compiler', () => {
  const event = (seq: number, type: string, data: unknown) => ({ seq, type, data }) as unknown as EventEnvelope;
  const events = [
    event(1, 'model.output', {
      turn: 1,
      text: 'look',
      toolCalls: [{ callId: 'c1', name: 'read_file', input: { path: 'a' } }],
      stopReason: 'tool_use',
      usage: { inputTokens: 0, outputTokens: 0 },
      retries: 0,
    }),
    ...Array.from({ length: 8 }, (_, i) =>
      event(2 + i, 'tool.observation', {
        callId: 'c1',
        observationId: `obs-${i + 1}`,
        tool: 'read_file',
        outcome: 'ok',
        content: `[obs-${i + 1}] ` + 'x'.repeat(4000),
        truncated: false,
      }),
    ),
  ];

  it('projects the log into messages, and compacts the oldest observations to marked references over budget', () => {
    const ctx = compileContext(events, { system: 's', task: 'do it', tools: [], tokenBudget: 5000, keepRecent: 4 });
    expect(ctx.request.messages[0]).toEqual({ role: 'user', content: 'do it' });
    expect(ctx.request.messages[1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'c1', name: 'read_file' }] });
    expect(ctx.compacted).toEqual(['obs-1', 'obs-2', 'obs-3', 'obs-4']);
    const tools = ctx.request.messages.filter((m) => m.role === 'tool');
    expect((tools[0] as { content: string }).content).toMatch(/^\[obs-1 compacted to save context/);
    // The most recent observations are never compacted, even over budget.
    expect((tools[7] as { content: string }).content).toContain('xxxx');
  });

  it('compacts nothing within budget', () => {
    expect(compileContext(events, { system: 's', task: 't', tools: [], tokenBudget: 1_000_000 }).compacted).toEqual([]);
  });
});
