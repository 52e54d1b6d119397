import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Shared helpers of the sub-agent tests (test/e2e/delegation-*.test.ts): each runs the real CLI with
 * scripted models (parent and children) against real sandboxes and reads the logs it left.
 */
export const root = fileURLToPath(new URL('../..', import.meta.url));
export const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
export type Event = {
  type: string;
  data: Record<string, unknown>;
  runId: string;
  parentRunId: string | null;
  id: string;
};

export function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-deleg-'));
  for (const [f, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), c);
  }
  return dir;
}
export function scriptFile(script: unknown): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return file;
}
export function run(dir: string, script: unknown, extra: string[] = []) {
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
export function why(stderr: string, events: Event[]): string {
  const ends = events.filter((e) => e.type === 'run.completed').map((e) => `${e.runId}: ${JSON.stringify(e.data)}`);
  return [stderr.trim(), ...ends].filter(Boolean).join('\n');
}
export const budget = { turns: 5, toolCalls: 5, tokens: 100_000, seconds: 120 };
export const handoff = (task: string, tools: string[], paths: string[], extra: Record<string, unknown> = {}) => ({
  name: 'delegate',
  input: { task, tools, paths, evidence: [], budget, expect: 'what you did', ...extra },
});
export const observations = (events: Event[]) =>
  events
    .filter((e) => e.type === 'tool.observation')
    .map((e) => e.data as { callId: string; outcome: string; content: string; tool: string });
