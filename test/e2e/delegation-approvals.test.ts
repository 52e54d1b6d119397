import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, repo, run, handoff } from '../support/delegation';

/**
 * Sub-agents through the real CLI: a child's ask, and applying a child's change, pause the tree until
 * approved; resume runs each action once.
 */
describe('sub-agents (real CLI, real sandboxes)', () => {
  it(
    "a child's ask in a headless run pauses the tree; approving it and resuming finishes the tree, each " +
      'action once',
    () => {
      const dir = repo({
        'README.md': '# x\n',
        '.gatehouse/policy.json': JSON.stringify({ mode: 'sandboxed-auto', ask: ['bash(echo ran*)'] }),
      });
      const script = {
        turns: [
          { toolCalls: [handoff('record a run', ['bash'], ['**'])] },
          { final: 'The sub-agent recorded the run (obs-3).' },
        ],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
              { final: 'appended (obs-1)' },
            ],
          },
        ],
      };
      const first = run(dir, script);
      expect(first.r.status, first.why).toBe(3);
      const cli2 = (args: string[]) =>
        spawnSync(process.execPath, [cli, ...args, '--state-dir', first.stateDir], {
          encoding: 'utf8',
          timeout: 180_000,
          env: { ...process.env, CI: 'true' },
          input: '',
        });
      const childId = String(first.parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
      expect(first.parent.at(-1)).toMatchObject({ type: 'run.paused' });
      expect(first.logOf(childId).at(-1)).toMatchObject({ type: 'run.paused' });
      // The child's request is the tree's: listed under the parent, labelled with the lineage.
      const pending = cli2(['approvals', first.rootId, '--json'])
        .stdout.trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { runId: string; requestId: string; lineage: string[] });
      expect(pending).toHaveLength(1);
      expect(pending[0]).toMatchObject({ runId: childId, lineage: [first.rootId, childId] });
      expect(cli2(['approve', first.rootId, pending[0]!.requestId]).status).toBe(0);
      const resumed = cli2(['resume', first.rootId, '--json']);
      expect(resumed.status, resumed.stderr + resumed.stdout).toBe(0);
      const parent = first.logOf(first.rootId);
      const child = first.logOf(childId);
      expect(child.filter((e) => e.type === 'tool.execution.started')).toHaveLength(1);
      expect(child.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
      expect(parent.filter((e) => e.type === 'agent.completed')).toHaveLength(1);
      expect(parent.find((e) => e.type === 'agent.completed')!.data).toMatchObject({
        status: 'final',
        filesChanged: ['ran.log'],
      });
      expect(parent.filter((e) => e.type === 'tool.intent' && e.data.tool === 'write_file')).toHaveLength(1);
      expect(parent.at(-1)).toMatchObject({
        type: 'run.completed',
        data: { status: 'final', filesChanged: ['ran.log'] },
      });
    },
  );

  it(
    "applying a child's change can itself ask: the tree pauses, and resume applies it once without re-running " +
      'the child',
    () => {
      const dir = repo({ 'src/a.js': 'export const a = 1;\n' });
      const policyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-pol-')), 'policy.json');
      writeFileSync(policyFile, JSON.stringify({ ask: ['write_file(src/**)'] }));
      const script = {
        turns: [
          { toolCalls: [handoff('set a to 2', ['read_file', 'edit_file'], ['src/a.js'])] },
          { final: 'a is 2 (obs-3)' },
        ],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'read_file', input: { path: 'src/a.js' } }] },
              { toolCalls: [{ name: 'edit_file', input: { path: 'src/a.js', oldText: 'a = 1', newText: 'a = 2' } }] },
              { final: 'done (obs-2)' },
            ],
          },
        ],
      };
      const first = run(dir, script, ['--policy', policyFile]);
      expect(first.r.status, first.why).toBe(3);
      const cli2 = (args: string[]) =>
        spawnSync(process.execPath, [cli, ...args, '--state-dir', first.stateDir], {
          encoding: 'utf8',
          timeout: 180_000,
          env: { ...process.env, CI: 'true' },
          input: '',
        });
      const requested = first.parent.find((e) => e.type === 'approval.requested')!;
      expect(requested.data).toMatchObject({ tool: 'write_file', rule: 'ask[0] write_file(src/**)' });
      expect(cli2(['approve', first.rootId, String(requested.data.requestId)]).status).toBe(0);
      const resumed = cli2(['resume', first.rootId, '--json']);
      expect(resumed.status, resumed.stderr + resumed.stdout).toBe(0);
      const parent = first.logOf(first.rootId);
      const childId = String(parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
      // The child ran once; its change was written once, by the parent, with the person's grant.
      expect(first.logOf(childId).filter((e) => e.type === 'run.started')).toHaveLength(1);
      expect(first.logOf(childId).filter((e) => e.type === 'tool.execution.started')).toHaveLength(2);
      const writes = parent.filter((e) => e.type === 'tool.execution.started' && e.data.primitive === 'write_file');
      expect(writes).toHaveLength(1);
      expect(writes[0]!.data.approvalId).toBe(parent.find((e) => e.type === 'approval.granted')!.id);
      expect(parent.filter((e) => e.type === 'agent.completed')).toHaveLength(1);
      expect(parent.at(-1)).toMatchObject({
        type: 'run.completed',
        data: { status: 'final', filesChanged: ['src/a.js'] },
      });
    },
  );
});
