import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import { buildTree, TREE_LIMITS, walkTree } from '../../src/events/lineage';
import { tempStateDir } from './helpers';
import { hex, Agent, spawn, done, handoff, node, leaf, leafNode, root, rootNode } from './lineage-harness';

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
