import { canonicalJson, sha256Hex, type EventDataOf } from '@gatehouse/shared';
import type { AgentNode } from '../../src/events/agent-node';
import { RunLog } from '../../src/events/index';

/** Agent logs written the way the pipeline and the delegator write them, and the trees expected from them. */

export const hex = (c: string) => c.repeat(64);
export const POLICY = { mode: 'sandboxed-auto', source: 'built-in', sha256: hex('0'), rules: 0, paths: ['**'] };
export const BUDGET = { turns: 3, toolCalls: 3, tokens: 100_000, seconds: 120 };

export type How =
  | { allow: string }
  | {
      user: {
        requestId: string;
        approver: string;
        channel: 'cli' | 'nats' | 'terminal' | 'headless';
        scope: 'once' | 'run';
      };
    }
  | { deny: string }
  | { pending: string }
  | { reject: 'schema' };

/** One agent's log, written the way the pipeline and the delegator write it. */
export class Agent {
  readonly log: RunLog;
  #obs = 0;
  constructor(
    state: string,
    readonly runId: string,
    readonly parentRunId: string | null,
    task: string,
    surface: string[],
    lineage: string[],
  ) {
    this.log = RunLog.create(state, runId, { parentRunId });
    this.log.append('run.started', parentRunId ? 'runtime' : 'user', {
      task,
      mode: 'sandboxed-auto',
      surface,
      lineage,
    });
  }

  /** intent → validation → approval (→ request → answer) → execution → observation. */
  call(
    callId: string,
    tool: string,
    input: unknown,
    how: How,
    outcome: EventDataOf<'tool.observation'>['outcome'] = 'ok',
  ): this {
    const l = this.log;
    l.append('tool.intent', 'model', { callId, turn: 1, tool, input });
    if ('reject' in how) {
      l.append('tool.validation', 'runtime', {
        callId,
        ok: false,
        stage: how.reject,
        errors: [{ path: '', code: 'invalid_type', message: 'bad' }],
      });
      return this.observe(callId, tool, 'rejected');
    }
    l.append('tool.validation', 'runtime', { callId, ok: true, stage: 'semantic', errors: [], input });
    const decision = 'allow' in how ? 'allow' : 'deny' in how ? 'deny' : 'ask';
    const policyId = 'allow' in how ? how.allow : 'deny' in how ? how.deny : 'mode:confirm-each';
    const approval = l.append('tool.approval', 'policy', {
      callId,
      decision,
      policyId,
      reason: 'r',
      actionHash: hex('a'),
      executionHash: hex('e'),
    });
    if ('deny' in how) return this.observe(callId, tool, 'denied');
    let approvalId = approval.id;
    if ('user' in how || 'pending' in how) {
      const requestId = 'user' in how ? how.user.requestId : how.pending;
      l.append('approval.requested', 'runtime', {
        requestId,
        callId,
        tool,
        input,
        actionHash: hex('a'),
        executionHash: hex('e'),
        rule: policyId,
        reason: 'r',
        risk: [],
        shape: tool,
        lineage: [this.runId],
      });
      if ('pending' in how) return this.observe(callId, tool, 'pending');
      const { approver, channel, scope } = how.user;
      approvalId = l.append('approval.granted', 'user', {
        requestId,
        callId,
        actionHash: hex('a'),
        executionHash: hex('e'),
        scope,
        approver,
        channel,
        reason: '',
      }).id;
    }
    l.append('tool.execution.started', 'runtime', {
      callId,
      invocationId: `inv-${callId}`,
      executor: 'sandbox',
      primitive: tool,
      input,
      timeoutMs: 1000,
      approvalId,
    });
    l.append('tool.execution.completed', 'sandbox', {
      callId,
      invocationId: `inv-${callId}`,
      status: 'ok',
      exitCode: 0,
      signal: null,
      durationMs: 1,
      bytes: 2,
      truncated: false,
      filesChanged: [],
      artifactRefs: [],
    });
    return this.observe(callId, tool, outcome);
  }

  observe(callId: string, tool: string, outcome: EventDataOf<'tool.observation'>['outcome']): this {
    this.log.append('tool.observation', 'runtime', {
      callId,
      observationId: `obs-${++this.#obs}`,
      tool,
      outcome,
      content: 'x',
      truncated: false,
    });
    return this;
  }

  spawned(d: EventDataOf<'agent.spawned'>): this {
    this.log.append('agent.spawned', 'runtime', d);
    return this;
  }

  completed(d: EventDataOf<'agent.completed'>): this {
    this.log.append('agent.completed', 'runtime', d);
    return this;
  }

  end(status: 'final' | 'partial' | 'failed' | 'cancelled', stopReason: string, answer?: string): void {
    this.log.append('run.completed', 'runtime', { status, stopReason, ...(answer !== undefined ? { answer } : {}) });
    this.log.close();
  }

  pause(pending: string[]): void {
    this.log.append('run.paused', 'runtime', { pending, workspace: { dir: null, files: [], deleted: [] } });
    this.log.close();
  }
}

export const spawn = (
  parentRunId: string,
  childRunId: string,
  callId: string,
  depth: number,
  handoffSha256 = sha256Hex(childRunId),
): EventDataOf<'agent.spawned'> => ({
  parentRunId,
  childRunId,
  callId,
  reason: `task of ${childRunId}`,
  handoffSha256,
  tools: ['list_files'],
  paths: ['**'],
  evidence: [],
  budget: BUDGET,
  policy: POLICY,
  depth,
});
export const done = (
  parentRunId: string,
  childRunId: string,
  callId: string,
  status: string,
  answer: string | null,
  stopReason = status === 'final' ? 'final_answer' : 'awaiting_approval',
): EventDataOf<'agent.completed'> => ({
  parentRunId,
  childRunId,
  callId,
  status,
  stopReason,
  resultSha256: answer === null ? null : sha256Hex(answer),
  evidence: [],
  filesChanged: [],
  withheld: [],
});
export const handoff = (task: string) => ({
  task,
  tools: ['list_files'],
  paths: ['**'],
  evidence: [],
  budget: BUDGET,
  expect: 'a list',
});
export const node = (n: Partial<AgentNode> & Pick<AgentNode, 'runId' | 'parentRunId' | 'depth'>): AgentNode => ({
  task: '',
  status: 'final',
  stopReason: 'final_answer',
  tools: ['list_files'],
  actions: [],
  approvals: [],
  children: [],
  problems: [],
  ...n,
});

/** A child that lists files, allowed by a rule, and answers. */
export function leaf(
  state: string,
  parent: string,
  runId: string,
  callId: string,
  depth: number,
  lineage: string[],
  hash?: string,
): void {
  const d = spawn(parent, runId, callId, depth, hash);
  new Agent(state, runId, parent, `task of ${runId}`, ['list_files'], lineage)
    .spawned(d)
    .call('call_0_0', 'list_files', { path: '.' }, { allow: 'builtin:read-only' })
    .completed(done(parent, runId, callId, 'final', `${runId} done`))
    .end('final', 'final_answer', `${runId} done`);
}
export const leafNode = (
  runId: string,
  parentRunId: string,
  depth: number,
  extra: Partial<AgentNode> = {},
): AgentNode =>
  node({
    runId,
    parentRunId,
    depth,
    task: `task of ${runId}`,
    actions: [
      {
        callId: 'call_0_0',
        tool: 'list_files',
        input: '{"path":"."}',
        outcome: 'ok',
        authorisedBy: 'builtin:read-only',
      },
    ],
    ...extra,
  });

/** A root that delegates one call per child, each spawned and completed in its log as the delegator writes them. */
export function root(
  state: string,
  children: Array<{ runId: string; status?: string; answer?: string | null; hash?: string; completed?: boolean }>,
): void {
  const a = new Agent(state, 'run_root', null, 'split the work', ['list_files', 'bash', 'delegate'], ['run_root']);
  a.call(
    'call_0_0',
    'bash',
    { command: 'make' },
    { user: { requestId: 'req_1', approver: 'alice', channel: 'cli', scope: 'once' } },
  );
  children.forEach((c, i) => a.spawned(spawn('run_root', c.runId, `call_1_${i}`, 1, c.hash)));
  children.forEach((c, i) => {
    if (c.completed !== false)
      a.completed(
        done(
          'run_root',
          c.runId,
          `call_1_${i}`,
          c.status ?? 'final',
          c.answer === undefined ? `${c.runId} done` : c.answer,
        ),
      );
    a.call(
      `call_1_${i}`,
      'delegate',
      handoff(`task of ${c.runId}`),
      { allow: 'mode:sandboxed-auto' },
      c.status === undefined || c.status === 'final' ? 'ok' : 'failed',
    );
  });
  a.end('final', 'final_answer', 'all done');
}
export const rootNode = (
  children: AgentNode[],
  outcomes: string[] = children.map(() => 'ok'),
  problems: string[] = [],
): AgentNode =>
  node({
    runId: 'run_root',
    parentRunId: null,
    depth: 0,
    task: 'split the work',
    tools: ['list_files', 'bash', 'delegate'],
    actions: [
      {
        callId: 'call_0_0',
        tool: 'bash',
        input: '{"command":"make"}',
        outcome: 'ok',
        authorisedBy: 'alice via cli (once)',
      },
      ...children.map((c, i) => ({
        callId: `call_1_${i}`,
        tool: 'delegate',
        input: `${canonicalJson(handoff(`task of ${c.runId}`)).slice(0, 119)}…`,
        outcome: outcomes[i]!,
        authorisedBy: 'mode:sandboxed-auto',
      })),
    ],
    approvals: [{ requestId: 'req_1', tool: 'bash', status: 'granted', approver: 'alice', channel: 'cli' }],
    children,
    problems,
  });
