import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, policyFile, scriptFile, waitFor } from '../support/queue-cli';
import { logOf, repoIn, startMcpServe, textOf, type McpServe } from '../support/mcp-serve';

/**
 * `gatehouse mcp serve` as another agent meets it: the SDK's Client spawns the real CLI, which
 * runs real sandboxes with a scripted model. Runs finish with a diff, pause on an approval the
 * approve tool answers, and a caller cannot widen the server's policy nor reach outside its roots.
 */

type Outcome = {
  runId: string;
  outcome: string;
  answer?: string;
  filesChanged: string[];
  diff?: string;
  pending: Array<{ runId: string; requestId: string; tool: string; input: unknown; rule: string }>;
  notes: string[];
};
const newRoot = (): string => realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-root-')));

/** Long calls: a run takes seconds to a minute; progress notifications keep the request alive. */
const LONG = { timeout: 240_000, resetTimeoutOnProgress: true };

let server: McpServe | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('gatehouse mcp serve (real CLI, SDK client, real sandboxes)', () => {
  it('refuses to start without a policy, or with one that is not valid (exit 2, a clear message)', () => {
    const script = `scripted:${scriptFile({ turns: [{ final: 'x' }] })}`;
    const none = spawnSync(process.execPath, [CLI, 'mcp', 'serve', '--model', script], {
      encoding: 'utf8',
      input: '',
      timeout: 60_000,
    });
    expect(none.status).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('gatehouse mcp serve needs --policy FILE');
    const bad = spawnSync(
      process.execPath,
      [CLI, 'mcp', 'serve', '--model', script, '--policy', policyFile({ mode: 'auto' })],
      { encoding: 'utf8', input: '', timeout: 60_000 },
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/mode: expected one of .*did you mean sandboxed-auto/);
  });

  it('lists run, status and approve with their input schemas', async () => {
    const root = newRoot();
    server = await startMcpServe({ script: { turns: [{ final: 'x' }] }, roots: [root] });
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['approve', 'run', 'status']);
    const run = tools.find((t) => t.name === 'run')!;
    expect(run.inputSchema.required).toEqual(expect.arrayContaining(['task', 'repository']));
    expect(Object.keys(run.inputSchema.properties ?? {})).toEqual(['task', 'repository', 'config']);
    expect(run.outputSchema?.properties).toHaveProperty('diff');
    const approve = tools.find((t) => t.name === 'approve')!;
    expect(approve.inputSchema.required).toEqual(expect.arrayContaining(['runId', 'requestId', 'decision']));
  });

  it(
    'a run completes in a sandbox and returns its outcome, answer, diff and run id; the repository is untouched',
    {
      timeout: 300_000,
    },
    async () => {
      const root = newRoot();
      const repo = repoIn(root, { 'README.md': '# mcp\n' });
      server = await startMcpServe({
        script: {
          turns: [
            { toolCalls: [{ name: 'write_file', input: { path: 'hello.txt', content: 'hello from mcp\n' } }] },
            { toolCalls: [{ name: 'bash', input: { command: 'cat hello.txt' } }] },
            { final: 'hello.txt holds hello from mcp (obs-2).' },
          ],
        },
        policy: { mode: 'sandboxed-auto' },
        roots: [root],
      });
      const progress: string[] = [];
      const result = await server.client.callTool(
        { name: 'run', arguments: { task: 'write hello.txt', repository: repo } },
        undefined,
        { ...LONG, onprogress: (p) => void progress.push(String(p.message)) },
      );
      expect(result.isError, textOf(result)).toBeFalsy();
      const o = result.structuredContent as Outcome;
      expect(o).toMatchObject({ outcome: 'final', answer: 'hello.txt holds hello from mcp (obs-2).' });
      expect(o.runId).toMatch(/^run_/);
      expect(o.filesChanged).toEqual(['hello.txt']);
      expect(o.diff).toContain('+hello from mcp');
      expect(textOf(result)).toContain(`run ${o.runId}: final`);
      expect(textOf(result)).toContain('+hello from mcp');
      expect(existsSync(path.join(repo, 'hello.txt'))).toBe(false);
      // The run is a gatehouse run like any other: its log is in the server's state directory.
      expect(logOf(server.stateDir, o.runId).at(-1)).toMatchObject({ type: 'run.completed' });
      expect(progress).toContain('run.started');
      expect(progress.some((m) => m.startsWith('tool.execution.started'))).toBe(true);

      const status = await server.client.callTool({ name: 'status', arguments: { runId: o.runId } });
      expect(status.structuredContent).toMatchObject({ runId: o.runId, outcome: 'final' });
      const list = await server.client.callTool({ name: 'status', arguments: {} });
      expect((list.structuredContent as { runs: Array<{ runId: string }> }).runs.map((r) => r.runId)).toEqual([
        o.runId,
      ]);
    },
  );

  it(
    "a caller's config cannot widen the server's policy (its allow rule and wider mode are not taken, its deny " +
      'rule is); the ask pauses the run and approve resumes it to the end',
    async () => {
      const root = newRoot();
      const repo = repoIn(root, { 'README.md': '# approvals\n' });
      // The caller tries to allow the asked command, to take a wider mode, and adds a deny of its own.
      const config = path.join(root, 'caller-config.json');
      writeFileSync(
        config,
        JSON.stringify({
          policy: { mode: 'sandboxed-auto', allow: ['bash(touch *)'], deny: ['bash(git push*)'] },
        }),
      );
      server = await startMcpServe({
        script: {
          turns: [
            { toolCalls: [{ name: 'bash', input: { command: 'touch ran.log' } }] },
            { toolCalls: [{ name: 'bash', input: { command: 'ls ran.log' } }] },
            { final: 'ran.log exists, as obs-2 shows.' },
          ],
        },
        // No ask rule: confirm-each's own default asks for the command the caller tried to allow.
        policy: { mode: 'confirm-each', allow: ['bash(ls *)'] },
        roots: [root],
      });
      const paused = await server.client.callTool(
        { name: 'run', arguments: { task: 'record a run', repository: repo, config } },
        undefined,
        LONG,
      );
      expect(paused.isError, textOf(paused)).toBeFalsy();
      const p = paused.structuredContent as Outcome;
      expect(p.outcome).toBe('paused');
      expect(p.pending).toHaveLength(1);
      expect(p.pending[0]).toMatchObject({ tool: 'bash', input: { command: 'touch ran.log' } });
      expect(p.notes.join('\n')).toContain('1 allow rule(s)');
      expect(p.notes.join('\n')).toContain('mode sandboxed-auto');
      expect(textOf(paused)).toContain('approve tool');
      const started = logOf(server.stateDir, p.runId)[0]!;
      expect(started.data.mode).toBe('confirm-each');
      const recorded = (started.data.policy as { file: { allow: unknown[]; deny: unknown[] } }).file;
      expect(recorded.allow).toEqual(['bash(ls *)']);
      expect(recorded.deny).toEqual(['bash(git push*)']);

      const status = await server.client.callTool({ name: 'status', arguments: { runId: p.runId } });
      expect(status.structuredContent).toMatchObject({ outcome: 'paused' });
      // A request the run does not have, and a deny without a reason, are tool errors; nothing is recorded.
      const wrong = await server.client.callTool({
        name: 'approve',
        arguments: { runId: p.runId, requestId: 'req_nope', decision: 'approve' },
      });
      expect(wrong.isError).toBe(true);
      expect(textOf(wrong)).toContain(`has no pending request req_nope; pending: ${p.pending[0]!.requestId}`);
      const noReason = await server.client.callTool({
        name: 'approve',
        arguments: { runId: p.runId, requestId: p.pending[0]!.requestId, decision: 'deny' },
      });
      expect(noReason.isError).toBe(true);
      expect(textOf(noReason)).toContain('a deny needs a reason');

      const done = await server.client.callTool(
        {
          name: 'approve',
          arguments: { runId: p.runId, requestId: p.pending[0]!.requestId, decision: 'approve', reason: 'fine' },
        },
        undefined,
        LONG,
      );
      expect(done.isError, textOf(done)).toBeFalsy();
      expect(done.structuredContent).toMatchObject({ runId: p.runId, outcome: 'final' });
      const log = logOf(server.stateDir, p.runId);
      const grant = log.find((e) => e.type === 'approval.granted')!;
      expect(grant).toMatchObject({ actor: 'user', data: { channel: 'cli', scope: 'once', reason: 'fine' } });
      expect(String(grant.data.approver)).toMatch(/ for mcp client gatehouse-e2e$/);
      const ran = log.filter(
        (e) =>
          e.type === 'tool.execution.started' && (e.data.input as { command?: string }).command === 'touch ran.log',
      );
      expect(ran).toHaveLength(1);
      // Answered once: a second answer is refused.
      const again = await server.client.callTool({
        name: 'approve',
        arguments: { runId: p.runId, requestId: p.pending[0]!.requestId, decision: 'approve' },
      });
      expect(again.isError).toBe(true);
    },
    400_000,
  );

  it('bad inputs, paths outside the roots and runs it did not start are tool errors; nothing is started', async () => {
    const root = newRoot();
    const outside = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-outside-')));
    const repo = repoIn(root, { 'README.md': '# x\n' });
    const link = path.join(root, 'link-out');
    symlinkSync(outside, link);
    writeFileSync(path.join(outside, 'config.json'), '{}');
    server = await startMcpServe({ script: { turns: [{ final: 'x' }] }, roots: [root] });
    const call = (name: string, args: Record<string, unknown>) =>
      server!.client.callTool({ name, arguments: args }, undefined, LONG);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['run', { repository: repo }, /Input validation error.*task/s],
      ['run', { task: 'x'.repeat(20_001), repository: repo }, /Input validation error.*task/s],
      ['run', { task: 'a\u0000b', repository: repo }, /control characters/],
      ['run', { task: 'x', repository: 'repo' }, /not an absolute path/],
      ['run', { task: 'x', repository: outside }, /outside the folders this server accepts/],
      ['run', { task: 'x', repository: link }, /outside the folders this server accepts/],
      ['run', { task: 'x', repository: path.join(root, 'nope') }, /no such repository/],
      ['run', { task: 'x', repository: repo, config: path.join(outside, 'config.json') }, /outside the folders/],
      ['status', { runId: 'run_01NOTMINE' }, /not started by this server session/],
      ['status', { runId: '../../etc' }, /Input validation error/],
      ['approve', { runId: 'run_01NOTMINE', requestId: 'req_1', decision: 'approve' }, /not started by this/],
      ['approve', { runId: 'run_01NOTMINE', requestId: 'req_1', decision: 'maybe' }, /Input validation error/],
    ];
    for (const [name, args, expected] of cases) {
      const r = await call(name, args);
      expect(r.isError, `${name} ${JSON.stringify(args).slice(0, 200)}`).toBe(true);
      expect(textOf(r)).toMatch(expected);
    }
    expect(existsSync(path.join(server.stateDir, 'runs'))).toBe(false);
  });

  it('runs are bounded (--max-runs): a run beyond is refused while one is going', async () => {
    const root = newRoot();
    const repo = repoIn(root, { 'README.md': '# slow\n' });
    server = await startMcpServe({
      script: {
        turns: [{ toolCalls: [{ name: 'bash', input: { command: 'sleep 8; echo slept' } }] }, { final: 'Slept.' }],
      },
      policy: { mode: 'sandboxed-auto' },
      roots: [root],
      extra: ['--max-runs', '1'],
    });
    const first = server.client.callTool(
      { name: 'run', arguments: { task: 'sleep', repository: repo } },
      undefined,
      LONG,
    );
    const going = await waitFor(async () => {
      const list = await server!.client.callTool({ name: 'status', arguments: {} });
      return (list.structuredContent as { runs: Array<{ outcome: string }> }).runs.some((r) => r.outcome === 'running');
    }, 60_000);
    expect(going).toBe(true);
    const second = await server.client.callTool({ name: 'run', arguments: { task: 'again', repository: repo } });
    expect(second.isError).toBe(true);
    expect(textOf(second)).toContain('the most this server runs at once (--max-runs 1)');
    const r = await first;
    expect(r.structuredContent).toMatchObject({ outcome: 'final' });
  }, 300_000);
});
