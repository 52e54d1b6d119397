import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, policyFile, scriptFile } from './queue-cli';

/** A real `gatehouse mcp serve` process, spoken to by the SDK's own client over its stdin/stdout. */
export interface McpServe {
  client: Client;
  stateDir: string;
  stderr: () => string;
  close: () => Promise<void>;
  /** The server process itself (its stdin is the client's end of the connection). */
  process: ChildProcess;
  /** Resolves when the server process has exited, with how. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface McpServeOptions {
  /** The model script every run of this server follows. */
  script: unknown;
  policy?: unknown;
  roots: string[];
  extra?: string[];
}

export async function startMcpServe(o: McpServeOptions): Promise<McpServe> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-state-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      CLI,
      'mcp',
      'serve',
      '--policy',
      policyFile(o.policy),
      '--model',
      `scripted:${scriptFile(o.script)}`,
      '--state-dir',
      stateDir,
      ...o.roots.flatMap((r) => ['--root', r]),
      ...(o.extra ?? []),
    ],
    env: { ...(process.env as Record<string, string>), CI: 'true' },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-40_000)));
  const client = new Client({ name: 'gatehouse-e2e', version: '1.0.0' });
  await client.connect(transport);
  // The SDK keeps the process it spawned to itself: taken here, to see how the server ends.
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  if (!child?.pid) throw new Error('the SDK transport no longer exposes its process (_process): update this helper');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { client, stateDir, stderr: () => err, close: () => client.close(), process: child, exited };
}

/** The Docker containers (running or not) labelled as one run's: its sandbox, its proxy. */
export function containersOf(runId: string): string[] {
  const r = spawnSync('docker', ['ps', '-aq', '--filter', `label=gatehouse.run=${runId}`], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`docker ps failed: ${r.stderr || r.error?.message}`);
  return r.stdout.trim().split('\n').filter(Boolean);
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const first = ((result as { content?: unknown }).content as Array<{ type: string; text?: string }> | undefined)?.[0];
  return first?.type === 'text' ? (first.text ?? '') : '';
}

/** A git repository inside `root` (a server's --root), with the files given, committed. */
export function repoIn(root: string, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(root, 'repo-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  spawnSync('git', ['init', '-q'], { cwd: dir });
  spawnSync('git', ['add', '-A'], { cwd: dir });
  spawnSync('git', ['-c', 'user.email=t@gatehouse', '-c', 'user.name=t', 'commit', '-qm', 'fixture'], { cwd: dir });
  return dir;
}

export type ServedEvent = { type: string; data: Record<string, unknown>; actor: string };

/** The events of one of the server's runs, from its state directory. */
export function logOf(stateDir: string, runId: string): ServedEvent[] {
  return readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ServedEvent);
}
