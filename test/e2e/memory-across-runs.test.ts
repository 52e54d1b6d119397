import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileContext } from '@gatehouse/orchestrator';
import type { EventEnvelope } from '@gatehouse/shared';
import {
  call,
  cleanScratch,
  gatehouse,
  json,
  logOf,
  of,
  pendingRequest,
  scratch,
  type Cli,
  type Event,
} from '../support/plan-cli';
import { repoWith } from '../support/queue-cli';

/**
 * Memory across runs through the real CLI, real sandboxes and scripted models (docs/memory.md): a run
 * on repository A proposes a record citing what it read, a person approves it headless (pause, approve,
 * resume), a run on a clone of A is shown it, a run on an unrelated repository is not, a record removed
 * by `gatehouse memory expire` is shown to nobody, and a claim whose quote was never observed is refused
 * at validation without asking anyone. One state directory (one store) for the whole file; the tests
 * run in order and each builds on the store the previous one left.
 */
const stateDir = scratch('gh-mem-e2e-state-');
const LONG = 240_000;
const TEST_LINE = '"test": "node --test --test-concurrency=1 spec/quokka-suite"';
const QUOTE = 'node --test --test-concurrency=1 spec/quokka-suite';
const TEXT = 'The test command of this repository is node --test --test-concurrency=1 spec/quokka-suite.';
const REMOTE_A = 'git@github.com:gatehouse-e2e/memory-a.git';

const git = (cwd: string, args: string[]): void => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
};

/** A committed git repository with an `origin` remote. */
function repository(files: Record<string, string>, remote: string): string {
  const dir = repoWith(files);
  git(dir, ['remote', 'add', 'origin', remote]);
  return dir;
}

const repoA = repository(
  { 'package.json': `{\n  "name": "memory-a",\n  ${TEST_LINE}\n}\n`, 'README.md': '# A\n' },
  REMOTE_A,
);
const repoB = repository(
  { 'package.json': '{\n  "name": "memory-b",\n  "scripts": {}\n}\n', 'README.md': '# B\n' },
  'git@github.com:gatehouse-e2e/memory-b.git',
);

/** Every command of this file on the one state directory (the key comes from global-setup.ts). */
const gh = (args: string[]): Cli => gatehouse([...args, '--state-dir', stateDir]);

/** `gatehouse run --memory` on `repo` with a scripted model; the policy allows reads and asks nothing else. */
function memoryRun(repo: string, task: string, turns: unknown[]): Cli & { runId: string } {
  const r = gh([
    'run',
    task,
    '--repo',
    repo,
    '--model',
    `scripted:${json('script.json', { turns })}`,
    '--policy',
    json('policy.json', { mode: 'sandboxed-auto' }),
    '--memory',
    '--json',
  ]);
  return { ...r, runId: r.events[0]?.runId ?? 'none' };
}

const readPackage = call('read_file', { path: 'package.json' });
const finalCiting = { final: 'package.json is the manifest of this repository (obs-1).' };

/** The one memory.recalled of a run, right after run.started. */
function recalled(log: Event[]): Record<string, unknown> {
  const all = of(log, 'memory.recalled');
  expect(all).toHaveLength(1);
  expect(log[1]!.type).toBe('memory.recalled');
  return all[0]!;
}

/**
 * The first message the model was sent (the task, with what memory recalled for it), compiled from the
 * log before the first model.request as the loop compiles it (context/compile.ts; no event holds the
 * context itself, model.request records its hash: run 2 checks the two agree with a trace replay).
 */
function firstMessage(log: Event[]): string {
  const at = log.findIndex((e) => e.type === 'model.request');
  expect(at).toBeGreaterThan(0);
  const context = compileContext(log.slice(0, at) as unknown as EventEnvelope[], {
    system: '',
    task: String(log[0]!.data.task),
    tools: [],
    tokenBudget: 1_000_000,
  });
  const first = context.request.messages[0]!;
  expect(first.role).toBe('user');
  return first.role === 'user' ? first.content : '';
}

type Listed = { repository: string; records: Array<Record<string, unknown>>; refused: unknown[] };
function listFor(repo: string): Listed {
  const r = gh(['memory', 'list', '--repo', repo, '--json']);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
}

let recordId = '';
let run1 = '';
let repositoryA = '';

afterAll(() => cleanScratch());

describe('memory across runs (real CLI, real sandboxes, scripted models)', () => {
  it(
    'run 1 on A: remember is asked, the headless run pauses (exit 3); approved and resumed, the record is ' +
      'stored, verified, with the run and observation as its source',
    { timeout: LONG },
    () => {
      const remember = call('remember', {
        text: TEXT,
        scope: 'repository',
        confidence: 'high',
        citations: [{ observationId: 'obs-1', quote: QUOTE }],
      });
      const r = memoryRun(repoA, 'find the test command', [
        readPackage,
        remember,
        { final: 'package.json names the test command (obs-1); proposed it for memory (obs-2).' },
      ]);
      expect(r.status, r.stderr).toBe(3);
      run1 = r.runId;
      expect(r.events[0]!.data.surface).toContain('remember');
      expect(of(r.events, 'tool.validation').at(-1)).toMatchObject({ ok: true, stage: 'semantic' });
      const requested = of(r.events, 'approval.requested');
      expect(requested).toHaveLength(1);
      expect(requested[0]).toMatchObject({ tool: 'remember', input: { text: TEXT } });
      expect(r.events.at(-1)!.type).toBe('run.paused');
      // Nothing is stored while the request waits.
      expect(of(r.events, 'memory.stored')).toEqual([]);
      expect(listFor(repoA).records).toEqual([]);

      const approve = gh(['approve', run1, pendingRequest(r.events, 'remember')]);
      expect(approve.status, approve.stderr).toBe(0);
      const resumed = gh(['resume', run1, '--json']);
      expect(resumed.status, resumed.stderr).toBe(0);

      const log = logOf({ stateDir, runId: run1 });
      expect(log.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
      const stored = of(log, 'memory.stored');
      expect(stored).toHaveLength(1);
      const storedRecord = stored[0]!.record as Record<string, unknown>;
      expect(storedRecord).toMatchObject({ scope: 'repository', sourceRunId: run1, observationIds: ['obs-1'] });
      recordId = String(storedRecord.id);
      repositoryA = String(stored[0]!.repository);
      expect(repositoryA).toMatch(/^git-[0-9a-f]{24}$/);
      expect(log.find((e) => e.type === 'tool.observation' && e.data.tool === 'remember')!.data).toMatchObject({
        outcome: 'ok',
      });

      const listed = listFor(repoA);
      expect(listed.repository).toBe(repositoryA);
      expect(listed.refused).toEqual([]);
      expect(listed.records).toHaveLength(1);
      expect(listed.records[0]).toMatchObject({
        id: recordId,
        text: TEXT,
        scope: 'repository',
        repository: repositoryA,
        confidence: 'high',
        verified: true,
        source: { runId: run1, observationIds: ['obs-1'], citations: [{ observationId: 'obs-1', quote: QUOTE }] },
      });
      expect(String(listed.records[0]!.approvedBy)).toMatch(/ via cli$/);
    },
  );

  it(
    'run 2 on a clone of A (same root commit, same remote spelled otherwise): the record is recalled and the ' +
      "model's first context holds it inside the <remembered-data> frame",
    { timeout: LONG },
    () => {
      expect(recordId).not.toBe('');
      const clone = path.join(scratch('gh-mem-e2e-clone-'), 'a');
      git(path.dirname(clone), ['clone', '-q', repoA, clone]);
      git(clone, ['remote', 'set-url', 'origin', 'https://github.com/gatehouse-e2e/memory-a']);

      const r = memoryRun(clone, 'run the test command', [readPackage, finalCiting]);
      expect(r.status, r.stderr).toBe(0);
      const log = logOf({ stateDir, runId: r.runId });
      const rec = recalled(log);
      expect(rec.repository).toBe(repositoryA);
      expect(rec.records).toEqual([
        expect.objectContaining({ id: recordId, scope: 'repository', sourceRunId: run1, observationIds: ['obs-1'] }),
      ]);
      const block = String(rec.content);
      const frame = /^<remembered-data nonce="([0-9a-f]+)">\n[\s\S]*\n<\/remembered-data nonce="\1">$/.exec(block);
      expect(frame, block).not.toBeNull();
      expect(block).toContain(`[${recordId}] repository, confidence high, from run ${run1} (obs-1)`);
      expect(block).toContain(TEXT);

      // The task's message carries the block; the trace replay proves the context rebuilt from the log is
      // the one whose hash the first model.request recorded.
      expect(firstMessage(log)).toBe(`run the test command\n\n${block}`);
      const trace = gh(['replay', r.runId, '--mode', 'trace', '--json']);
      expect(trace.status, trace.stderr).toBe(0);
      expect(of(trace.events, 'replay.summary')).toEqual([expect.objectContaining({ verdict: 'match' })]);
      const turn1 = of(trace.events, 'replay.turn')[0]!;
      expect(turn1).toMatchObject({ turn: 1, match: true });
      expect((turn1.context as { recorded: string }).recorded).toBe(of(log, 'model.request')[0]!.contextSha256);
    },
  );

  it(
    'run 3 on an unrelated repository B: nothing is recalled and the record is not in the context',
    { timeout: LONG },
    () => {
      expect(recordId).not.toBe('');
      const r = memoryRun(repoB, 'run the test command', [readPackage, finalCiting]);
      expect(r.status, r.stderr).toBe(0);
      const log = logOf({ stateDir, runId: r.runId });
      const rec = recalled(log);
      expect(rec.repository).toMatch(/^git-/);
      expect(rec.repository).not.toBe(repositoryA);
      expect(rec).toMatchObject({ records: [], content: '', tampered: [] });
      expect(firstMessage(log)).toBe('run the test command');
      // The record is still there, for A.
      expect(listFor(repoA).records.map((x) => x.id)).toEqual([recordId]);
    },
  );

  it(
    'a remember whose quote was never observed is refused at validation: nobody is asked, nothing is stored',
    { timeout: LONG },
    () => {
      expect(recordId).not.toBe('');
      const invented = 'node --test --test-concurrency=8 spec/invented-suite';
      const r = memoryRun(repoA, 'find the test command', [
        readPackage,
        call('remember', {
          text: `The test command is ${invented}.`,
          scope: 'repository',
          confidence: 'high',
          citations: [{ observationId: 'obs-1', quote: invented }],
        }),
        finalCiting,
      ]);
      expect(r.status, r.stderr).toBe(0);
      const log = logOf({ stateDir, runId: r.runId });
      const intent = of(log, 'tool.intent').find((d) => d.tool === 'remember')!;
      const validation = of(log, 'tool.validation').find((d) => d.callId === intent.callId)!;
      expect(validation).toMatchObject({
        ok: false,
        stage: 'semantic',
        errors: [expect.objectContaining({ path: 'citations.0.quote', code: 'quote_not_found' })],
      });
      expect(of(log, 'approval.requested')).toEqual([]);
      expect(of(log, 'tool.approval').filter((d) => d.callId === intent.callId)).toEqual([]);
      expect(of(log, 'tool.execution.started').filter((d) => d.callId === intent.callId)).toEqual([]);
      expect(of(log, 'memory.stored')).toEqual([]);
      expect(log.find((e) => e.type === 'tool.observation' && e.data.callId === intent.callId)!.data).toMatchObject({
        outcome: 'rejected',
      });
      expect(listFor(repoA).records.map((x) => x.id)).toEqual([recordId]);
      const all = gh(['memory', 'list', '--all', '--json']);
      expect((JSON.parse(all.stdout) as Listed).records.map((x) => x.id)).toEqual([recordId]);
    },
  );

  it(
    'gatehouse memory expire --older-than 0d removes the record (plain expire keeps it, unexpired); a further ' +
      'run on A recalls nothing',
    { timeout: LONG },
    () => {
      expect(recordId).not.toBe('');
      const plain = gh(['memory', 'expire', '--json']);
      expect(plain.status, plain.stderr).toBe(0);
      expect(JSON.parse(plain.stdout)).toEqual({ removed: [], refused: [] });
      const dry = gh(['memory', 'expire', '--older-than', '0d', '--dry-run', '--json']);
      expect(JSON.parse(dry.stdout)).toEqual({ wouldRemove: [recordId], refused: [] });
      expect(listFor(repoA).records.map((x) => x.id)).toEqual([recordId]);

      const expired = gh(['memory', 'expire', '--older-than', '0d', '--json']);
      expect(expired.status, expired.stderr).toBe(0);
      expect(JSON.parse(expired.stdout)).toEqual({ removed: [recordId], refused: [] });
      expect(listFor(repoA).records).toEqual([]);

      const r = memoryRun(repoA, 'run the test command', [readPackage, finalCiting]);
      expect(r.status, r.stderr).toBe(0);
      const log = logOf({ stateDir, runId: r.runId });
      const rec = recalled(log);
      expect(rec).toMatchObject({ repository: repositoryA, records: [], content: '', tampered: [] });
      expect(firstMessage(log)).toBe('run the test command');
    },
  );
});
