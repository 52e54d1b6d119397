import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The GitHub Actions runner as the example workflow's scripts see it (examples/github-actions/):
 * a workspace with the trusted checkout, the runner's files (event, outputs, step summary) and
 * variables, CI=true and no standard input.
 */
export const root = fileURLToPath(new URL('../..', import.meta.url));
export const EXAMPLE = path.join(root, 'examples/github-actions');
const CLI = path.join(root, 'orchestrator/bin/gatehouse.mjs');

export interface Runner {
  workspace: string;
  temp: string;
  scripts: string;
  output: string;
  summary: string;
  env: Record<string, string>;
}

/** A fresh runner: the example's scripts copied into trusted/.github/gatehouse/scripts, as the README says. */
export function runner(extra: Record<string, string> = {}): Runner {
  const base = mkdtempSync(path.join(os.tmpdir(), 'gh-actions-'));
  const workspace = path.join(base, 'work');
  const temp = path.join(base, 'temp');
  const scripts = path.join(workspace, 'trusted/.github/gatehouse/scripts');
  mkdirSync(temp, { recursive: true });
  cpSync(path.join(EXAMPLE, 'scripts'), scripts, { recursive: true });
  const bin = path.join(base, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'gatehouse'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  const output = path.join(temp, 'github_output');
  const summary = path.join(temp, 'step_summary');
  writeFileSync(output, '');
  writeFileSync(summary, '');
  return {
    workspace,
    temp,
    scripts,
    output,
    summary,
    env: {
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: temp,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_REPOSITORY: 'example/app',
      GITHUB_RUN_ID: '1001',
      GITHUB_ACTOR: 'octo-maintainer',
      GITHUB_TOKEN: 'test-token',
      GATEHOUSE_BIN: path.join(bin, 'gatehouse'),
      ...extra,
    },
  };
}

/**
 * Writes the event file and runs one of the scripts as a workflow step would. Asynchronous: the
 * API stand-in answers from this process.
 */
export async function step(
  r: Runner,
  script: string,
  event: unknown,
  env: Record<string, string> = {},
  timeoutMs = 300_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const eventPath = path.join(r.temp, `event-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(eventPath, JSON.stringify(event));
  const child = spawn(process.execPath, [path.join(r.scripts, script)], {
    cwd: r.workspace,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...r.env, GITHUB_EVENT_PATH: eventPath, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { status, stdout, stderr };
}

/** GITHUB_OUTPUT as the runner reads it: `name<<DELIM` blocks (and plain `name=value` lines). */
export function outputs(r: Runner): Record<string, string[]> {
  const lines = readFileSync(r.output, 'utf8').split('\n');
  const out: Record<string, string[]> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const block = /^([^=<]+)<<(.+)$/.exec(line);
    if (block) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== block[2]; i++) body.push(lines[i]!);
      (out[block[1]!] ??= []).push(body.join('\n'));
    } else if (line.includes('=')) {
      const [name, ...rest] = line.split('=');
      (out[name!] ??= []).push(rest.join('='));
    }
  }
  return out;
}

export interface ApiStub {
  url: string;
  requests: Array<{ path: string; authorization: string | undefined }>;
  close: () => Promise<void>;
}

/** A loopback stand-in for the GitHub API: answers from a table of paths, 404 for the rest. */
export async function apiStub(routes: Record<string, { status?: number; body: unknown }>): Promise<ApiStub> {
  const requests: ApiStub['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const route = routes[req.url ?? ''];
    res.writeHead(route?.status ?? (route ? 200 : 404), { 'content-type': 'application/json' });
    res.end(JSON.stringify(route?.body ?? { message: 'Not Found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The checkout a run works on: a git repository whose policy asks before `echo ran >> ran.log` (so a
 * run pauses for an answer) and allows the rest. Returns the commit.
 */
export function checkout(workspace: string): string {
  const repo = path.join(workspace, 'repo');
  mkdirSync(path.join(repo, '.gatehouse'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# app\n');
  writeFileSync(
    path.join(repo, '.gatehouse/policy.json'),
    JSON.stringify({ mode: 'sandboxed-auto', ask: [{ rule: 'bash(echo ran*)', match: ['echo ran >> ran.log'] }] }),
  );
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'init');
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
}

/** The scripted model of a run that asks once (the `echo ran` above) and then answers. */
export function askingScript(): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-actions-script-')), 'script.json');
  writeFileSync(
    file,
    JSON.stringify({
      turns: [
        { text: 'Recording.', toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
        { final: 'Appended a line to ran.log (obs-1).' },
      ],
    }),
  );
  return file;
}
