import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalJson, sha256Hex, type EventDataOf } from '@gatehouse/shared';
import type { AgentNode } from '../../src/events/agent-node';
import { buildTree, TREE_LIMITS, walkTree } from '../../src/events/lineage';
import { RunLog } from '../../src/events/index';
import { treeCommand } from '../../src/cli/tree';
import { tempStateDir } from './helpers';

const hex = (c: string) => c.repeat(64);
const POLICY = { mode: 'sandboxed-auto', source: 'built-in', sha256: hex('0'), rules: 0, paths: ['**'] };
const BUDGET = { turns: 3, toolCalls: 3, tokens: 100_000, seconds: 120 };

type How =
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
class Agent {
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

const spawn = (
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
const done = (
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
const handoff = (task: string) => ({
  task,
  tools: ['list_files'],
  paths: ['**'],
  evidence: [],
  budget: BUDGET,
  expect: 'a list',
});
const node = (n: Partial<AgentNode> & Pick<AgentNode, 'runId' | 'parentRunId' | 'depth'>): AgentNode => ({
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
function leaf(
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
const leafNode = (runId: string, parentRunId: string, depth: number, extra: Partial<AgentNode> = {}): AgentNode =>
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
function root(
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
const rootNode = (
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
        authorisedBy: 'user:alice via cli (once)',
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

describe('buildTree', () => {
  it('rebuilds a parent with two children and a grandchild, with who allowed each action', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_a' }, { runId: 'run_b' }]);
    // run_a delegates once more, then answers.
    new Agent(state, 'run_a', 'run_root', 'task of run_a', ['list_files', 'delegate'], ['run_root', 'run_a'])
      .spawned(spawn('run_root', 'run_a', 'call_1_0', 1))
      .spawned(spawn('run_a', 'run_a1', 'call_0_0', 2))
      .completed(done('run_a', 'run_a1', 'call_0_0', 'final', 'run_a1 done'))
      .call('call_0_0', 'delegate', handoff('task of run_a1'), { allow: 'mode:sandboxed-auto' })
      .call('call_1_0', 'bash', { command: 'rm -rf /' }, { deny: 'deny:rm-rf' }, 'denied')
      .call('call_1_1', 'list_files', { nope: 1 }, { reject: 'schema' })
      .completed(done('run_root', 'run_a', 'call_1_0', 'final', 'run_a done'))
      .end('final', 'final_answer', 'run_a done');
    leaf(state, 'run_a', 'run_a1', 'call_0_0', 2, ['run_root', 'run_a', 'run_a1']);
    leaf(state, 'run_root', 'run_b', 'call_1_1', 1, ['run_root', 'run_b']);

    const tree = buildTree(state, 'run_root');
    expect(tree).toEqual(
      rootNode([
        node({
          runId: 'run_a',
          parentRunId: 'run_root',
          depth: 1,
          task: 'task of run_a',
          tools: ['list_files', 'delegate'],
          actions: [
            {
              callId: 'call_0_0',
              tool: 'delegate',
              input: `${canonicalJson(handoff('task of run_a1')).slice(0, 119)}…`,
              outcome: 'ok',
              authorisedBy: 'mode:sandboxed-auto',
            },
            {
              callId: 'call_1_0',
              tool: 'bash',
              input: '{"command":"rm -rf /"}',
              outcome: 'denied',
              authorisedBy: 'none (denied by deny:rm-rf)',
            },
            {
              callId: 'call_1_1',
              tool: 'list_files',
              input: '{"nope":1}',
              outcome: 'rejected',
              authorisedBy: 'none (rejected at schema)',
            },
          ],
          children: [leafNode('run_a1', 'run_a', 2)],
        }),
        leafNode('run_b', 'run_root', 1),
      ]),
    );
    expect(walkTree(tree).map((n) => n.runId)).toEqual(['run_root', 'run_a', 'run_a1', 'run_b']);
  });

  it("reports a child whose agent.spawned disagrees with its parent's on the handoff hash", () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_a', hash: hex('1') }]);
    leaf(state, 'run_root', 'run_a', 'call_1_0', 1, ['run_root', 'run_a'], hex('2'));
    expect(buildTree(state, 'run_root')).toEqual(
      rootNode([
        leafNode('run_a', 'run_root', 1, {
          problems: [`agent.spawned disagrees on handoffSha256: parent's log ${hex('1')}, child's log ${hex('2')}`],
        }),
      ]),
    );
  });

  it('reports agent.completed that disagrees, events naming another parent, and a child no spawn accounts for', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_a', answer: 'something else' }]);
    leaf(state, 'run_root', 'run_a', 'call_1_0', 1, ['run_root', 'run_a']);
    new Agent(state, 'run_stray', 'run_root', 'stray', [], ['run_root', 'run_stray']).end('final', 'final_answer');
    const tree = buildTree(state, 'run_root');
    expect(tree.problems).toEqual(["run run_stray names this run as its parent, but this run's log never spawned it"]);
    expect(tree.children[0]!.problems).toEqual([
      `agent.completed disagrees on resultSha256: parent's log ${sha256Hex('something else')}, child's log ` +
        `${sha256Hex('run_a done')}`,
    ]);
  });

  it('reports a missing child log and still shows what the parent says about it', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_gone' }, { runId: 'run_b' }]);
    leaf(state, 'run_root', 'run_b', 'call_1_1', 1, ['run_root', 'run_b']);
    const file = path.join(state, 'runs', 'run_gone', 'events.jsonl');
    expect(buildTree(state, 'run_root')).toEqual(
      rootNode([
        node({
          runId: 'run_gone',
          parentRunId: 'run_root',
          depth: 1,
          task: 'task of run_gone',
          problems: [`child log unreadable: run run_gone not found: no ${file}`],
        }),
        leafNode('run_b', 'run_root', 1),
      ]),
    );
  });

  it('shows a paused child with its pending approval', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_p', status: 'paused', answer: null }]);
    new Agent(state, 'run_p', 'run_root', 'task of run_p', ['bash'], ['run_root', 'run_p'])
      .spawned(spawn('run_root', 'run_p', 'call_1_0', 1))
      .call('call_0_0', 'bash', { command: 'npm test' }, { pending: 'req_9' })
      .completed(done('run_root', 'run_p', 'call_1_0', 'paused', null))
      .pause(['req_9']);
    expect(buildTree(state, 'run_root')).toEqual(
      rootNode(
        [
          node({
            runId: 'run_p',
            parentRunId: 'run_root',
            depth: 1,
            task: 'task of run_p',
            status: 'paused',
            stopReason: 'awaiting_approval',
            tools: ['bash'],
            actions: [
              {
                callId: 'call_0_0',
                tool: 'bash',
                input: '{"command":"npm test"}',
                outcome: 'pending',
                authorisedBy: 'none (awaiting req_9)',
              },
            ],
            approvals: [{ requestId: 'req_9', tool: 'bash', status: 'pending' }],
          }),
        ],
        ['failed'],
      ),
    );
  });

  it(
    "reports a child that ended while its parent's log says nothing, and one the parent says ended " + 'that has not',
    () => {
      const state = tempStateDir();
      root(state, [{ runId: 'run_a', completed: false }]);
      leaf(state, 'run_root', 'run_a', 'call_1_0', 1, ['run_root', 'run_a']);
      expect(buildTree(state, 'run_root').children[0]!.problems).toEqual([
        "the child's log says it ended final, but the parent's log (which has ended) has no agent.completed for it",
      ]);

      const state2 = tempStateDir();
      root(state2, [{ runId: 'run_a' }]);
      new Agent(state2, 'run_a', 'run_root', 'task of run_a', ['list_files'], ['run_root', 'run_a'])
        .spawned(spawn('run_root', 'run_a', 'call_1_0', 1))
        .log.close();
      const child = buildTree(state2, 'run_root').children[0]!;
      expect(child.status).toBe('running');
      expect(child.problems).toEqual([
        "the parent's log says the child ended final, but the child's log has not ended",
      ]);
    },
  );

  it('bounds the depth it reads', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_a' }]);
    new Agent(state, 'run_a', 'run_root', 'task of run_a', ['delegate'], ['run_root', 'run_a'])
      .spawned(spawn('run_root', 'run_a', 'call_1_0', 1))
      .spawned(spawn('run_a', 'run_a1', 'call_0_0', 2))
      .completed(done('run_a', 'run_a1', 'call_0_0', 'final', 'x'))
      .completed(done('run_root', 'run_a', 'call_1_0', 'final', 'run_a done'))
      .end('final', 'final_answer', 'run_a done');
    const tree = buildTree(state, 'run_root', { ...TREE_LIMITS, maxDepth: 1 });
    expect(tree.children[0]!.children).toEqual([]);
    expect(tree.children[0]!.problems).toEqual(['1 sub-agent(s) not read: the tree is read at most 1 levels deep']);
    expect(buildTree(state, 'run_root', { maxDepth: 16, maxNodes: 1 }).problems).toEqual([
      '1 sub-agent(s) not read: the tree is limited to 1 agents',
    ]);
  });

  it('throws for a missing root', () => {
    expect(() => buildTree(tempStateDir(), 'run_nope')).toThrow(/run run_nope not found/);
  });
});

describe('gatehouse show --tree', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    return { out, err };
  };

  it('prints one indented block per agent and exits 0 when the logs agree; --json prints the tree', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_b' }]);
    leaf(state, 'run_root', 'run_b', 'call_1_0', 1, ['run_root', 'run_b']);
    const text = capture();
    expect(treeCommand('run_root', state, false)).toBe(0);
    const lines = text.out.join('').split('\n');
    expect(lines[0]).toBe('● run_root  final (final_answer)  depth 0');
    expect(lines).toContain('   call_0_0  bash {"command":"make"} → ok; allowed by user:alice via cli (once)');
    expect(lines).toContain('   approval req_1 (bash): granted by alice via cli');
    expect(lines).toContain('  └─ run_b  final (final_answer)  depth 1');
    expect(lines).toContain('     call_0_0  list_files {"path":"."} → ok; allowed by builtin:read-only');
    expect(lines.at(-2)).toBe('2 agent(s); the logs agree');
    expect(text.err).toEqual([]);
    vi.restoreAllMocks();

    const json = capture();
    expect(treeCommand('run_root', state, true)).toBe(0);
    expect(JSON.parse(json.out.join(''))).toEqual(buildTree(state, 'run_root'));
  });

  it('exits 1 and prints the problems when a log disagrees', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_gone' }]);
    const text = capture();
    expect(treeCommand('run_root', state, false)).toBe(1);
    expect(text.out.join('')).toContain('PROBLEM: child log unreadable: run run_gone not found');
    expect(text.err.join('')).toContain('gatehouse: run_gone: child log unreadable');
  });
});
