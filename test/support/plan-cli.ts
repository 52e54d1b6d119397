import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileContext } from '@gatehouse/orchestrator';
import type { EventEnvelope } from '@gatehouse/shared';

/**
 * Shared by the plan-mode end-to-end files (plan-validation, plan-recovery, plan-escalation): the built
 * CLI run with a scripted model, its JSON events, the answer commands, and what the model was shown.
 * Every child process is bounded in time; every scratch directory is removed by `cleanScratch`.
 */
export const root = fileURLToPath(new URL('../..', import.meta.url));
export const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const ENV = { ...process.env, CI: 'true' };
/** A plan run here takes seconds; this only bounds a hang. */
const CHILD_TIMEOUT_MS = 120_000;

const made: string[] = [];
/** For afterEach: removes every directory `scratch` made. */
export function cleanScratch(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}
export function scratch(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}
/** A copy of examples/failing-test: src/math.js's add() subtracts; `node --test` fails until it adds. */
export function repo(): string {
  const dir = scratch('gh-plane2e-repo-');
  cpSync(path.join(root, 'examples/failing-test'), dir, { recursive: true });
  return dir;
}
export function json(name: string, content: unknown): string {
  const f = path.join(scratch('gh-plane2e-'), name);
  writeFileSync(f, JSON.stringify(content));
  return f;
}

export interface Event {
  type: string;
  id: string;
  actor: string;
  data: Record<string, unknown>;
  runId: string;
}
/** The JSON event lines of --json output (a command that prints one document, such as a report, gives none). */
export const parse = (stdout: string): Event[] =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{"') && l.endsWith('}'))
    .map((l) => JSON.parse(l) as Event);
export const of = (events: Event[], type: string): Record<string, unknown>[] =>
  events.filter((e) => e.type === type).map((e) => e.data);

export interface Cli {
  status: number | null;
  stdout: string;
  stderr: string;
  events: Event[];
}
/** Any gatehouse command, stdin closed (headless). */
export function gatehouse(args: string[]): Cli {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
    env: ENV,
    input: '',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, events: parse(r.stdout) };
}

export interface PlanRun extends Cli {
  dir: string;
  stateDir: string;
  runId: string;
}
/** `gatehouse plan GOAL` with a scripted model and a policy (and `extra` options: --config …). */
export function plan(o: { dir?: string; turns: unknown[]; policy: unknown; extra?: string[] }): PlanRun {
  const dir = o.dir ?? repo();
  const stateDir = scratch('gh-plane2e-runs-');
  const r = gatehouse([
    'plan',
    'make add() add',
    '--repo',
    dir,
    '--model',
    `scripted:${json('script.json', { turns: o.turns })}`,
    '--policy',
    json('policy.json', o.policy),
    '--state-dir',
    stateDir,
    '--json',
    ...(o.extra ?? []),
  ]);
  return { ...r, dir, stateDir, runId: r.events[0]?.runId ?? 'none' };
}
/** `gatehouse resume RUN` of a paused or stopped plan run. */
export function resume(r: PlanRun): Cli {
  return gatehouse(['resume', r.runId, '--state-dir', r.stateDir, '--repo', r.dir, '--json']);
}
export const logOf = (r: { stateDir: string; runId: string }): Event[] =>
  readFileSync(path.join(r.stateDir, 'runs', r.runId, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Event);

/** The request a paused run waits on for `tool` (submit_plan, escalation): its id. */
export function pendingRequest(events: Event[], tool: string): string {
  const asked = events.filter((e) => e.type === 'approval.requested' && e.data.tool === tool);
  const last = asked.at(-1);
  if (!last) throw new Error(`no approval.requested for ${tool} in ${events.length} events`);
  return String(last.data.requestId);
}

/**
 * What the model was shown at its last recorded turn, as the loop compiled it from the log (the same
 * projection `gatehouse replay --mode trace` rebuilds): all message text joined.
 */
export function lastContext(events: Event[]): string {
  const at = events.map((e) => e.type).lastIndexOf('model.request');
  const context = compileContext(events.slice(0, at) as unknown as EventEnvelope[], {
    system: '',
    task: '',
    tools: [],
    tokenBudget: 1_000_000,
  });
  return JSON.stringify(context.request.messages);
}

export const call = (name: string, input: unknown) => ({ toolCalls: [{ name, input }] });
export const read = call('read_file', { path: 'src/math.js' });
export const fix = call('edit_file', { path: 'src/math.js', oldText: 'return a - b;', newText: 'return a + b;' });
export const write = (file: string, content: string) => call('write_file', { path: file, content });
export const done = (taskId: string, summary: string) => call('complete_task', { taskId, summary });
export const submit = (tasks: unknown[]) => call('submit_plan', { tasks });

/** Three tasks: read, fix (checked by node --test), run the tests. */
export const FIX_PLAN = [
  { id: 't1', title: 'Read src/math.js to find why add() is wrong', tools: ['read_file'] },
  {
    id: 't2',
    title: 'Change add() in src/math.js to return a + b',
    dependsOn: ['t1'],
    tools: ['edit_file', 'read_file'],
    paths: ['src/**'],
    check: 'node --test',
  },
  { id: 't3', title: 'Run the test suite with node --test', dependsOn: ['t2'], tools: ['bash'] },
];
export const READS = ['read_file(**)', 'bash(node --test*)', 'edit_file(src/**)', 'write_file(*.txt)'];
export const POLICY_APPROVES_PLANS = { mode: 'confirm-novel', allow: ['submit_plan', ...READS] };
export const PEOPLE_APPROVE_PLANS = { mode: 'confirm-novel', allow: READS };

/**
 * A repository with `flaky.sh NAME TIMES WHAT`: its first TIMES runs under NAME fail (WHAT `sleep`
 * hangs for 30 s; anything else is printed, then exit 1), later runs print "ok". The count lives
 * in the sandbox's /tmp, so it lasts one sandbox (one run or one resume).
 */
export function flakyRepo(): string {
  const dir = repo();
  writeFileSync(
    path.join(dir, 'flaky.sh'),
    [
      'n=$(cat "/tmp/flaky-$1" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "/tmp/flaky-$1"',
      'if [ "$n" -le "$2" ]; then',
      '  if [ "$3" = sleep ]; then sleep 30; fi',
      '  echo "$3"; exit 1',
      'fi',
      'echo ok',
      '',
    ].join('\n'),
  );
  return dir;
}
/** Recipes with waits short enough for a test (the defaults wait 5 s and 30 s). */
export const FAST_RECOVERY = {
  recovery: {
    transient: { retries: 2, backoffMs: [300, 600] },
    logic: { retries: 1 },
    invalid_input: { retries: 1 },
  },
};
