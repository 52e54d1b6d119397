import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, policyFile, scriptFile } from '../support/queue-cli';
import { logOf, repoIn, startMcpServe, textOf, type McpServe } from '../support/mcp-serve';

/**
 * `gatehouse mcp serve --memory [--memory-budget N]` (issue 17): the operator turns memory on for
 * every run the server starts; a caller can neither turn it on nor raise its budget (the run tool
 * takes a task, a repository and a config, nothing else reaches the run's command line).
 */
const LONG = { timeout: 240_000, resetTimeoutOnProgress: true };
/** What a caller adds to try to turn memory on, or widen it: not part of the run tool's input. */
const SMUGGLED = { memory: true, memoryBudget: 1_000_000, '--memory': true };

let server: McpServe | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('gatehouse mcp serve and memory', () => {
  it('--memory-budget without --memory is a usage error (exit 2)', () => {
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'mcp',
        'serve',
        '--policy',
        policyFile(),
        '--model',
        `scripted:${scriptFile({ turns: [{ final: 'x' }] })}`,
        '--memory-budget',
        '9',
      ],
      { encoding: 'utf8', input: '', timeout: 60_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--memory-budget needs --memory');
  });

  it(
    "with --memory every run recalls within the operator's budget and is offered remember; a caller's " +
      'arguments change neither, and without --memory they cannot turn it on',
    { timeout: 600_000 },
    async () => {
      const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-mem-')));
      const repo = repoIn(root, { 'README.md': '# memory\n' });
      const script = { turns: [{ final: 'nothing to do.' }] };
      server = await startMcpServe({
        script,
        policy: { mode: 'sandboxed-auto' },
        roots: [root],
        extra: ['--memory', '--memory-budget', '50'],
      });
      const on = await server.client.callTool(
        { name: 'run', arguments: { task: 'look', repository: repo, ...SMUGGLED } },
        undefined,
        LONG,
      );
      expect(on.isError, textOf(on)).toBeFalsy();
      const onId = (on.structuredContent as { runId: string }).runId;
      const onLog = logOf(server.stateDir, onId);
      expect(onLog[0]!.data.surface).toContain('remember');
      expect(onLog.find((e) => e.type === 'memory.recalled')?.data).toMatchObject({ tokenBudget: 50 });
      await server.close();

      server = await startMcpServe({ script, policy: { mode: 'sandboxed-auto' }, roots: [root] });
      const off = await server.client.callTool(
        { name: 'run', arguments: { task: 'look', repository: repo, ...SMUGGLED } },
        undefined,
        LONG,
      );
      expect(off.isError, textOf(off)).toBeFalsy();
      const offLog = logOf(server.stateDir, (off.structuredContent as { runId: string }).runId);
      expect(offLog[0]!.data.surface).not.toContain('remember');
      expect(offLog.some((e) => e.type === 'memory.recalled')).toBe(false);
    },
  );
});
