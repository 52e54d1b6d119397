import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventEnvelope } from '@gatehouse/shared';

/** Helpers for the setup-phase tests: scratch folders, git repositories, the CLI, the log. */
const root = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = path.join(root, 'orchestrator/bin/gatehouse.mjs');

const made: string[] = [];
export function scratch(prefix = 'gh-setup-'): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}
export function cleanScratch(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

export function writeTree(dir: string, files: Record<string, string | object>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
}

/** A committed git repository of the given files. */
export function gitRepo(files: Record<string, string | object>): string {
  const dir = scratch('gh-setup-repo-');
  writeTree(dir, files);
  const git = (...args: string[]): void => {
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'init');
  return dir;
}

/** A model script: bash commands in turn, then the answer. */
export function script(commands: string[], answer: string): string {
  const file = path.join(scratch('gh-setup-script-'), 'script.json');
  writeFileSync(
    file,
    JSON.stringify({
      turns: [
        ...commands.map((command) => ({ text: '', toolCalls: [{ name: 'bash', input: { command } }] })),
        { final: answer },
      ],
    }),
  );
  return file;
}

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  events: EventEnvelope[];
}

/** `gatehouse run` through the real CLI bundle, headless, with its log read back. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 600_000): CliRun {
  const stateDir = scratch('gh-setup-state-');
  const r = spawnSync(process.execPath, [CLI, 'run', 'task', '--state-dir', stateDir, ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, CI: 'true', ...env },
    input: '',
  });
  const runsDir = path.join(stateDir, 'runs');
  const events: EventEnvelope[] = [];
  for (const id of safeReaddir(runsDir))
    for (const line of readFileSync(path.join(runsDir, id, 'events.jsonl'), 'utf8').split('\n'))
      if (line.trim()) events.push(JSON.parse(line) as EventEnvelope);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, events };
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export function dataOf<T = Record<string, unknown>>(events: EventEnvelope[], type: string): T[] {
  return events.filter((e) => e.type === type).map((e) => e.data as T);
}

/** An HTTP listener a test starts itself, to show what can and cannot be reached. */
export async function listener(
  host: string,
  body: string,
): Promise<{ port: number; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
