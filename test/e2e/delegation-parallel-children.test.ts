import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '@gatehouse/orchestrator';
import { cli, repo, run, handoff, observations } from '../support/delegation';

/**
 * Sub-agents through the real CLI: children working side by side, their changes applied by the
 * parent's pipeline, and the lineage in the logs.
 */
describe('sub-agents (real CLI, real sandboxes)', () => {
  it(
    'four children in parallel each fix a different file; the parent applies their changes through its own ' +
      'pipeline; the lineage in the logs matches',
    () => {
      const files = Object.fromEntries(['a', 'b', 'c', 'd'].map((n) => [`src/${n}.js`, `export const ${n} = 1;\n`]));
      const dir = repo(files);
      const names = ['a', 'b', 'c', 'd'];
      const script = {
        turns: [
          {
            text: 'One sub-agent per file.',
            toolCalls: names.map((n) =>
              handoff(`set ${n} to 2 in src/${n}.js`, ['read_file', 'edit_file'], [`src/${n}.js`]),
            ),
          },
          { toolCalls: [{ name: 'bash', input: { command: 'cat src/*.js' } }] },
          { final: 'All four files now hold 2 (obs-13).' },
        ],
        children: names.map((n) => ({
          turns: [
            { toolCalls: [{ name: 'read_file', input: { path: `src/${n}.js` } }] },
            {
              toolCalls: [
                { name: 'edit_file', input: { path: `src/${n}.js`, oldText: `${n} = 1`, newText: `${n} = 2` } },
              ],
            },
            { final: `${n} is 2 (obs-2)` },
          ],
        })),
      };
      const { r, parent, logOf, rootId, stateDir, runs, why } = run(dir, script);
      expect(r.status, why).toBe(0);
      const spawned = parent.filter((e) => e.type === 'agent.spawned');
      const completed = parent.filter((e) => e.type === 'agent.completed');
      expect(spawned).toHaveLength(4);
      expect(completed).toHaveLength(4);
      // All four were started before the first one finished: they ran side by side.
      expect(parent.indexOf(spawned[3]!)).toBeLessThan(parent.indexOf(completed[0]!));
      expect(runs).toHaveLength(5);
      for (const s of spawned) {
        const d = s.data as {
          childRunId: string;
          tools: string[];
          paths: string[];
          handoffSha256: string;
          depth: number;
        };
        const child = logOf(d.childRunId);
        expect(child.every((e) => e.parentRunId === rootId)).toBe(true);
        expect(child[0]).toMatchObject({ type: 'run.started', data: { surface: ['read_file', 'edit_file'] } });
        expect(child.find((e) => e.type === 'agent.spawned')!.data).toMatchObject({
          handoffSha256: d.handoffSha256,
          parentRunId: rootId,
          depth: 1,
        });
        expect(child.find((e) => e.type === 'agent.completed')!.data).toMatchObject({
          status: 'final',
          filesChanged: d.paths,
        });
        expect(child.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
        expect(verifyLog(path.join(stateDir, 'runs', d.childRunId, 'events.jsonl')).ok).toBe(true);
      }
      // The changes reached the parent's workspace only as the parent's own write_file calls.
      const writes = parent.filter((e) => e.type === 'tool.intent' && e.data.tool === 'write_file');
      expect(writes.map((e) => (e.data.input as { path: string }).path).sort()).toEqual(
        names.map((n) => `src/${n}.js`),
      );
      expect(parent.at(-1)).toMatchObject({
        type: 'run.completed',
        data: { status: 'final', filesChanged: names.map((n) => `src/${n}.js`) },
      });
      expect(String(observations(parent).at(-1)!.content)).toContain('export const d = 2;');

      // The whole tree, rebuilt from the logs alone, agrees with what happened.
      const tree = spawnSync(process.execPath, [cli, 'show', rootId, '--tree', '--json', '--state-dir', stateDir], {
        encoding: 'utf8',
      });
      expect(tree.status, tree.stderr).toBe(0);
      type Node = {
        runId: string;
        status: string;
        depth: number;
        problems: string[];
        children: Node[];
        actions: Array<{ tool: string; authorisedBy: string }>;
      };
      const rootNode = JSON.parse(tree.stdout) as Node;
      expect(rootNode).toMatchObject({ runId: rootId, status: 'final', depth: 0, problems: [] });
      expect(rootNode.children.map((c) => c.runId).sort()).toEqual(
        spawned.map((e) => String(e.data.childRunId)).sort(),
      );
      for (const c of rootNode.children) {
        expect(c).toMatchObject({ status: 'final', depth: 1, problems: [], children: [] });
        expect(c.actions.map((a) => a.tool)).toEqual(['read_file', 'edit_file']);
        expect(c.actions[1]!.authorisedBy).toBe('mode:sandboxed-auto');
      }
    },
  );
});
