import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '@gatehouse/orchestrator';

/**
 * Sub-agents through the real CLI, real sandboxes and scripted models (parent and children):
 * what a child may do is never more than its parent handed it, and the lineage is in the logs.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
type Event = { type: string; data: Record<string, unknown>; runId: string; parentRunId: string | null; id: string };

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-deleg-'));
  for (const [f, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), c);
  }
  return dir;
}
function scriptFile(script: unknown): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return file;
}
function run(dir: string, script: unknown, extra: string[] = []) {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'run',
      'task',
      '--repo',
      dir,
      '--model',
      `scripted:${scriptFile(script)}`,
      '--json',
      '--state-dir',
      stateDir,
      '--mode',
      'sandboxed-auto',
      ...extra,
    ],
    { encoding: 'utf8', timeout: 180_000, env: { ...process.env, CI: 'true' }, input: '' },
  );
  const all = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
  const rootId = all.find((e) => e.parentRunId === null)!.runId;
  const logOf = (runId: string): Event[] =>
    readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
  return {
    r,
    stateDir,
    rootId,
    parent: logOf(rootId),
    logOf,
    runs: readdirSync(path.join(stateDir, 'runs')),
    why: why(r.stderr, all),
  };
}
/** What a failed run printed and how each of its runs ended: the message an unexpected exit status carries. */
function why(stderr: string, events: Event[]): string {
  const ends = events.filter((e) => e.type === 'run.completed').map((e) => `${e.runId}: ${JSON.stringify(e.data)}`);
  return [stderr.trim(), ...ends].filter(Boolean).join('\n');
}
const budget = { turns: 5, toolCalls: 5, tokens: 100_000, seconds: 120 };
const handoff = (task: string, tools: string[], paths: string[], extra: Record<string, unknown> = {}) => ({
  name: 'delegate',
  input: { task, tools, paths, evidence: [], budget, expect: 'what you did', ...extra },
});
const observations = (events: Event[]) =>
  events
    .filter((e) => e.type === 'tool.observation')
    .map((e) => e.data as { callId: string; outcome: string; content: string; tool: string });

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

  it('a handoff cannot widen anything: extra fields, tools, budget, paths and depth are refused', () => {
    const dir = repo({ 'src/a.js': 'export const a = 1;\n', 'src/b.js': 'export const b = 1;\n' });
    const script = {
      turns: [
        { toolCalls: [handoff('x', ['read_file'], ['src/**'], { mode: 'sandboxed-auto' })] },
        { toolCalls: [handoff('x', ['read_file'], ['src/**'], { budget: { ...budget, turns: 100 } })] },
        { toolCalls: [handoff('x', ['read_file'], ['../outside/**'])] },
        {
          toolCalls: [
            handoff('nested', ['read_file', 'delegate'], ['src/a.js'], {
              budget: { ...budget, turns: 20, toolCalls: 20 },
            }),
          ],
        },
        { final: 'done' },
      ],
      children: [
        {
          turns: [
            // Not a subset of its own tools; outside its paths; then too deep (depth 2 → 3).
            { toolCalls: [handoff('x', ['bash'], ['src/a.js'])] },
            { toolCalls: [handoff('x', ['read_file'], ['src/b.js'])] },
            {
              toolCalls: [
                handoff('grandchild', ['read_file', 'delegate'], ['src/a.js'], {
                  budget: { ...budget, turns: 10, toolCalls: 10, tokens: 50_000, seconds: 60 },
                }),
              ],
            },
            { final: 'tried' },
          ],
          children: [
            {
              turns: [
                {
                  toolCalls: [
                    handoff('too deep', ['read_file'], ['src/a.js'], {
                      budget: { ...budget, turns: 2, toolCalls: 2, tokens: 10_000, seconds: 30 },
                    }),
                  ],
                },
                { final: 'tried' },
              ],
            },
          ],
        },
      ],
    };
    const { parent, logOf } = run(dir, script, ['--max-turns', '50']);
    const rejected = parent
      .filter((e) => e.type === 'tool.validation' && e.data.ok === false)
      .map((e) => (e.data.errors as Array<{ code: string; path: string }>)[0]);
    expect(rejected).toEqual([
      expect.objectContaining({ code: 'unrecognized_keys' }),
      expect.objectContaining({ code: 'budget_exceeds_parent', path: 'budget.turns' }),
      expect.objectContaining({ code: 'path_outside_scope' }),
    ]);
    const childId = String(parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
    const child = logOf(childId);
    const childRejected = child
      .filter((e) => e.type === 'tool.validation' && e.data.ok === false)
      .map((e) => (e.data.errors as Array<{ code: string }>)[0]!.code);
    expect(childRejected).toEqual(['tool_not_delegable', 'path_outside_scope']);
    const grandchildId = String(
      child.find((e) => e.type === 'agent.spawned' && e.runId === childId && e.data.parentRunId === childId)!.data
        .childRunId,
    );
    const grandchild = logOf(grandchildId);
    expect(grandchild.find((e) => e.type === 'tool.validation' && e.data.ok === false)!.data.errors).toEqual([
      expect.objectContaining({ code: 'depth_exceeded' }),
    ]);
    expect(grandchild[0]!.data).toMatchObject({ lineage: [parent[0]!.runId, childId, grandchildId] });
  });

  it('budgets handed out are spent: parallel children cannot together take more than the parent has left', () => {
    const dir = repo({ 'src/a.js': 'x\n' });
    const six = { budget: { ...budget, turns: 6, toolCalls: 6 } };
    const script = {
      turns: [
        { toolCalls: [handoff('one', ['list_files'], ['**'], six), handoff('two', ['list_files'], ['**'], six)] },
        { toolCalls: [handoff('three', ['list_files'], ['**'], six)] },
        { final: 'done' },
      ],
      children: [{ turns: [{ final: 'nothing to do' }] }, { turns: [{ final: 'nothing to do' }] }],
    };
    const { parent } = run(dir, script, ['--max-turns', '10']);
    const obs = observations(parent).filter((o) => o.callId === 'call_0_0' || o.callId === 'call_0_1');
    // Both parallel calls passed validation against the same remainder (9 turns); the runner
    // counts the first one's 6 before starting the second.
    expect(obs.map((o) => o.outcome).sort()).toEqual(['failed', 'ok']);
    expect(obs.find((o) => o.outcome === 'failed')!.content).toContain('budget_exceeds_parent');
    expect(parent.filter((e) => e.type === 'agent.spawned')).toHaveLength(1);
    // Later, validation itself counts what was handed out: 10 - 2 turns used - 6 handed = 2.
    const third = parent
      .filter((e) => e.type === 'tool.validation' && e.data.ok === false)
      .map((e) => (e.data.errors as Array<{ code: string; message: string }>)[0]!);
    expect(third).toEqual([expect.objectContaining({ code: 'budget_exceeds_parent' })]);
  });

  it(
    "inside, a child cannot use other tools, touch other paths, outlive its budget, or read the parent's " +
      'transcript; changes outside its paths are withheld',
    () => {
      const dir = repo({ 'src/a.js': 'export const a = 1;\n', 'src/b.js': 'export const b = 1;\n' });
      // First run only learns the ref of an artifact the parent's transcript holds (content-addressed).
      const big = { toolCalls: [{ name: 'bash', input: { command: 'seq 1 20000' } }] };
      const probe = run(dir, { turns: [big, { final: 'x' }] });
      const ref = String(observations(probe.parent)[0]!.content.match(/art-[0-9a-f]{16}/)![0]);
      const script = {
        turns: [
          big,
          {
            toolCalls: [
              handoff('work on a', ['read_file', 'read_artifact', 'bash'], ['src/a.js'], {
                budget: { ...budget, turns: 6, toolCalls: 6 },
              }),
            ],
          },
          { final: 'done' },
        ],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'edit_file', input: { path: 'src/a.js', oldText: 'a = 1', newText: 'a = 3' } }] },
              { toolCalls: [{ name: 'read_file', input: { path: 'src/b.js' } }] },
              { toolCalls: [{ name: 'read_artifact', input: { ref } }] },
              {
                toolCalls: [
                  {
                    name: 'read_file',
                    input: { path: path.join(probe.stateDir, 'runs', probe.rootId, 'events.jsonl') },
                  },
                ],
              },
              {
                toolCalls: [
                  {
                    name: 'bash',
                    input: { command: "sed -i 's/b = 1/b = 9/' src/b.js && sed -i 's/a = 1/a = 4/' src/a.js" },
                  },
                ],
              },
              { toolCalls: [{ name: 'read_file', input: { path: 'src/a.js' } }] },
              { final: 'never reached: the budget is 6 turns' },
            ],
          },
        ],
      };
      const { parent, logOf } = run(dir, script);
      const childId = String(parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
      const child = observations(logOf(childId));
      expect(child.map((o) => o.outcome)).toEqual(['rejected', 'denied', 'failed', 'rejected', 'ok', 'ok']);
      expect(child[0]!.content).toContain('not available in this run');
      expect(child[1]!.content).toContain("outside this sub-agent's paths");
      expect(child[2]!.content).toContain(ref);
      // The parent's log file on the host: outside the workspace, refused at validation before any policy.
      expect(child[3]!.content).toContain('outside the workspace');
      const completed = parent.find((e) => e.type === 'agent.completed')!.data;
      expect(completed).toMatchObject({ status: 'partial', stopReason: 'max_turns', withheld: ['src/b.js'] });
      // What the child was refused is part of the lineage, in both logs.
      expect(completed.denied).toEqual(['read_file: denied by handoff:paths']);
      expect(logOf(childId).find((e) => e.type === 'agent.completed')!.data.denied).toEqual(completed.denied);
      const delegateObs = observations(parent).find((o) => o.tool === 'delegate')!;
      expect(delegateObs.outcome).toBe('failed');
      expect(delegateObs.content).toContain('sub_agent_partial');
      expect(delegateObs.content).toContain('withheld (outside its paths, not applied): src/b.js');
      // src/a.js (inside its paths) came back through the parent's write path; src/b.js did not.
      expect(parent.at(-1)!.data).toMatchObject({ status: 'final', filesChanged: ['src/a.js'] });
    },
  );

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
      expect(resumed.status, resumed.stderr).toBe(0);
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
      expect(resumed.status, resumed.stderr).toBe(0);
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

  it('cancelling the parent stops every child and leaves no container behind', async () => {
    const dir = repo({ 'src/a.js': 'x\n' });
    const slow = { turns: [{ toolCalls: [{ name: 'bash', input: { command: 'sleep 60' } }] }, { final: 'slept' }] };
    const script = {
      turns: [{ toolCalls: [handoff('sleep', ['bash'], ['**']), handoff('sleep', ['bash'], ['**'])] }, { final: 'x' }],
      children: [slow, slow],
    };
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
    const child = spawn(
      process.execPath,
      [
        cli,
        'run',
        'x',
        '--repo',
        dir,
        '--model',
        `scripted:${scriptFile(script)}`,
        '--json',
        '--state-dir',
        stateDir,
        '--mode',
        'sandboxed-auto',
      ],
      { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const sleeping = new Promise<void>((resolve) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if ((out.match(/"primitive":"exec"/g) ?? []).length >= 2) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    // A run that ends before both children sleep fails here with how it ended, not by timing out.
    const first = await Promise.race([sleeping.then(() => 'sleeping' as const), exited.then(() => 'exited' as const)]);
    const printed = () =>
      out
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Event);
    expect(first, first === 'exited' ? why(err, printed()) : '').toBe('sleeping');
    child.kill('SIGINT');
    const code = await exited;
    clearTimeout(killer);
    expect(code).toBe(130);
    const runIds = readdirSync(path.join(stateDir, 'runs'));
    expect(runIds).toHaveLength(3);
    for (const id of runIds) {
      const events = readFileSync(path.join(stateDir, 'runs', id, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Event);
      expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'cancelled' } });
      const left = spawnSync('docker', ['ps', '-aq', '--filter', `label=gatehouse.run=${id}`], { encoding: 'utf8' });
      expect(left.stdout.trim()).toBe('');
    }
  });
});
