import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_SCHEMA_VERSION } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { auditRun } from '../../src/events/audit';
import { LogKey } from '../../src/events/key';
import { buildTree } from '../../src/events/lineage';
import { fold, StateTracker } from '../../src/events/state';
import { chooseWorkspace } from '../../src/run/restore-point';
import { codingTools } from '../../src/tools/builtin/index';
import { cliInProcess } from '../support/cli-in-process';

/**
 * Logs written by earlier versions of gatehouse (test/fixtures/logs/v<N>/, see the README there):
 * verify, show, the state fold and resume's reading of a run must keep reading every one of them.
 * Each folder is a copy of a real state directory and the made-up installation key that anchored it.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = path.join(root, 'test/fixtures/logs');
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const versions = readdirSync(fixtures)
  .filter((d) => /^v\d+$/.test(d))
  .map((d) => Number(d.slice(1)))
  .sort((a, b) => a - b);

type Named = 'completed' | 'paused' | 'subagent' | 'failed';
/**
 * From v3: a run with a setup phase that completes, and one whose setup fails (exit 5). From v4: a run
 * the check decided, one stopped by its cost budget and then resumed (one run, two names), and one
 * through an OpenAI-compatible server whose replies end oddly. From v6: a plan run paused at its gate,
 * resumed to an escalation, resumed to its end (one run, three names). From v7: a run with --memory that
 * stored a record, and the next one, which recalled it. From v8: a run with an MCP server paused on its
 * asked call, then approved and resumed to its end (one run, two names).
 */
type SetupNamed =
  | 'setup'
  | 'setupFailed'
  | 'checked'
  | 'budget'
  | 'budgetResumed'
  | 'provider'
  | 'replayTrace'
  | 'replayDryRun'
  | 'replayModel'
  | 'replayExecution'
  | 'planGate'
  | 'planEscalated'
  | 'plan'
  | 'memoryStored'
  | 'memoryRecalled'
  | 'mcpPaused'
  | 'mcpResumed';
interface Fixture {
  state: string;
  /** The key that anchored the logs; from version 2 on. Before that, a fresh one: this machine's. */
  keyFile: string;
  key: LogKey;
  runs: Record<Named, { runId: string; exit: number; runs: string[] }> &
    Partial<Record<SetupNamed, { runId: string; exit: number; runs: string[] }>>;
}

const temps: string[] = [];
/** A writable copy (resume's open takes the writer's lock), with the key made private as a key must be. */
function copyOf(version: number): Fixture {
  const dir = mkdtempSync(path.join(os.tmpdir(), `gh-fixture-v${version}-`));
  temps.push(dir);
  cpSync(path.join(fixtures, `v${version}`), dir, { recursive: true });
  const anchored = existsSync(path.join(dir, 'key', 'log.key'));
  const keyFile = path.join(dir, 'key', 'log.key');
  if (anchored) chmodSync(keyFile, 0o600); // git keeps no file modes but the executable bit
  return {
    state: path.join(dir, 'state'),
    keyFile,
    key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile }, create: !anchored }),
    runs: JSON.parse(readFileSync(path.join(dir, 'runs.json'), 'utf8')) as Fixture['runs'],
  };
}
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

const fixtureEnv = (f: Fixture) => ({
  GATEHOUSE_KEY_FILE: f.keyFile,
  GATEHOUSE_HEADS_DIR: '',
  GATEHOUSE_STATE_DIR: '',
});
/** The built CLI, for a few calls per version: the bundle reads old logs too. */
const gatehouse = (f: Fixture, args: string[]) =>
  spawnSync(process.execPath, [cli, ...args, '--state-dir', f.state], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: root,
    env: { ...process.env, ...fixtureEnv(f) },
  });
/** The CLI's program in this process, for the calls made once per run (a process each took 0.4–5 s). */
const inProcess = (f: Fixture, args: string[]) => cliInProcess([...args, '--state-dir', f.state], fixtureEnv(f));

describe('fixture logs', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('the newest folder is of the schema version written now', () => {
    expect(versions.at(-1)).toBe(LOG_SCHEMA_VERSION);
  });

  describe.each(versions)('v%i', (version) => {
    it('is unchanged since it was made: fixtures are never edited (a new version gets a new folder)', () => {
      const dir = path.join(fixtures, `v${version}`);
      const sums = readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8').trimEnd().split('\n');
      const listed = sums.map((l) => l.slice(66));
      const present = readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name !== 'SHA256SUMS')
        .map((e) => `./${path.relative(dir, path.join(e.parentPath, e.name))}`)
        .sort();
      expect(present).toEqual(listed);
      for (const line of sums) {
        const file = line.slice(66);
        expect(
          `${createHash('sha256')
            .update(readFileSync(path.join(dir, file)))
            .digest('hex')}  ${file}`,
        ).toBe(line);
      }
    });

    it(`every event of every run is of schemaVersion ${version}`, () => {
      const f = copyOf(version);
      for (const runId of readdirSync(path.join(f.state, 'runs'))) {
        for (const e of RunLog.readEvents(f.state, runId)) expect(e.schemaVersion ?? 1).toBe(version);
      }
    });

    // Version 1 logs have no MACs and no head: their chain verifies, and verify says nothing anchors it.
    const anchored = version >= 2;
    it(
      `verify: every run's chain is intact, ${anchored ? 'and anchored' : 'unanchored (no MACs)'}, in-process and ` +
        `through the CLI`,
      async () => {
        const f = copyOf(version);
        const all = readdirSync(path.join(f.state, 'runs'));
        // Four runs, one with a sub-agent; from v3 two more (setup); from v4 three more; from v5 four replays;
        // from v6 a plan run; from v7 two memory runs; from v8 an MCP run.
        const counts: Record<number, number> = { 1: 5, 2: 5, 3: 7, 4: 10, 5: 14, 6: 15, 7: 17, 8: 18 };
        expect(all).toHaveLength(counts[version]!);
        for (const runId of all) {
          const r = auditRun(f.state, runId, f.key);
          expect({ runId, verdict: r.verdict, problems: r.problems, unanchored: r.unanchored }).toEqual({
            runId,
            verdict: anchored ? 'intact' : 'unanchored',
            problems: [],
            unanchored: anchored
              ? []
              : [
                  `${r.events} event(s) in the old format (schemaVersion 1, no MAC): ` +
                    'an edit with recomputed hashes cannot be detected in them',
                  'no head recorded for this run on this installation: a cut tail cannot be ruled out',
                ],
          });
          expect(anchored ? r.macs.verified : r.macs.unkeyed).toBe(r.events);
          expect(r.head.status).toBe(anchored ? 'matched' : 'missing');
          // The first run through the built CLI, every one through its program in-process.
          const v = runId === all[0] ? gatehouse(f, ['verify', runId]) : await inProcess(f, ['verify', runId]);
          const verdict = anchored ? 'ok' : 'UNANCHORED';
          expect(v.stdout).toMatch(new RegExp(`^${verdict}: run ${runId}: ${r.events} events, hash chain intact`));
          expect(v.status).toBe(anchored ? 0 : 3);
        }
        const ends = Object.fromEntries(
          (Object.keys(f.runs) as (Named | SetupNamed)[]).map((n) => [
            n,
            auditRun(f.state, f.runs[n]!.runId, f.key).completion?.status,
          ]),
        );
        expect(ends).toEqual({
          completed: 'final',
          paused: undefined,
          subagent: 'final',
          failed: 'failed',
          ...(version >= 3 ? { setup: 'final', setupFailed: 'failed' } : {}),
          // The budget run's last run.completed is its resumed end.
          ...(version >= 4 ? { checked: 'final', budget: 'final', budgetResumed: 'final', provider: 'final' } : {}),
          // A replay ends final whatever its verdict (the verdict is replay.summary's, the exit code says it).
          ...(version >= 5
            ? { replayTrace: 'final', replayDryRun: 'final', replayModel: 'final', replayExecution: 'final' }
            : {}),
          // The plan run's three names are one run: its end is partial (2 of its 5 tasks completed).
          ...(version >= 6 ? { planGate: 'partial', planEscalated: 'partial', plan: 'partial' } : {}),
          ...(version >= 7 ? { memoryStored: 'final', memoryRecalled: 'final' } : {}),
          // The MCP run's two names are one run: paused, then resumed to its end.
          ...(version >= 8 ? { mcpPaused: 'final', mcpResumed: 'final' } : {}),
        });
      },
      60_000,
    );

    it('the fold gives each run the state it ended in', () => {
      const f = copyOf(version);
      const state = (n: Named) => fold(RunLog.readEvents(f.state, f.runs[n].runId));

      const completed = state('completed');
      expect(completed).toMatchObject({ status: 'final', stopReason: 'final_answer', toolCalls: 4 });
      expect(completed.observations.map((o) => `${o.id} ${o.tool} ${o.outcome}`)).toEqual([
        'obs-1 bash failed',
        'obs-2 read_file ok',
        'obs-3 edit_file ok',
        'obs-4 bash ok',
      ]);

      const paused = state('paused');
      expect(paused).toMatchObject({ status: 'running', toolCalls: 1, observations: [] });
      expect(paused.approvals.paused).toBe(true);
      expect(Object.values(paused.approvals.requests).map((r) => [r.status, r.tool, r.rule])).toEqual([
        ['pending', 'bash', 'ask[0] bash(echo ran*)'],
      ]);

      // The parent applies the child's change through its own pipeline (read1, write1) before the delegate call ends.
      const subagent = state('subagent');
      expect(subagent).toMatchObject({ status: 'final', stopReason: 'final_answer', toolCalls: 4 });
      expect(subagent.observations.map((o) => `${o.id} ${o.tool} ${o.callId}`)).toEqual([
        'obs-1 read_file call_0_0.read1',
        'obs-2 write_file call_0_0.write1',
        'obs-3 delegate call_0_0',
        'obs-4 bash call_1_0',
      ]);
      expect(state('failed')).toMatchObject({ status: 'failed', stopReason: 'script_exhausted' });
    });

    it('show: the timeline of each run, and the tree of the one with a sub-agent', { timeout: 60_000 }, async () => {
      const f = copyOf(version);
      for (const n of Object.keys(f.runs) as (Named | SetupNamed)[]) {
        const s = await inProcess(f, ['show', f.runs[n]!.runId]);
        expect(s.stderr).toBe('');
        expect(s.status).toBe(0);
        expect(s.stdout).toMatch(/^ {3}0 {2}\S+ {2}user {5}run\.started {15}(fixture: |replay )/);
      }
      expect((await inProcess(f, ['show', f.runs.paused.runId])).stdout).toMatch(/run\.paused +waiting for apr_/);
      expect((await inProcess(f, ['show', f.runs.failed.runId])).stdout).toMatch(
        /run\.completed +failed \(script_exhausted\)/,
      );

      const child = f.runs.subagent.runs.find((r) => r !== f.runs.subagent.runId)!;
      const tree = buildTree(f.state, f.runs.subagent.runId);
      expect(tree).toMatchObject({ status: 'final', depth: 0, problems: [] });
      expect(tree.children.map((c) => [c.runId, c.status, c.depth, c.problems])).toEqual([[child, 'final', 1, []]]);
      const t = gatehouse(f, ['show', f.runs.subagent.runId, '--tree']);
      expect(t.stdout).toContain('2 agent(s); the logs agree');
      expect(t.status).toBe(0);
    });

    it(
      'resume reads the paused run back: the log opens for appending, the pending request, the workspace ' +
        'to restore',
      async () => {
        const f = copyOf(version);
        const { runId } = f.runs.paused;
        const listed = gatehouse(f, ['approvals', runId, '--json']);
        expect(listed.status).toBe(0);
        expect(JSON.parse(listed.stdout)).toMatchObject({
          runId,
          tool: 'bash',
          input: { command: 'echo ran >> ran.log' },
        });

        const { log, recovered } = RunLog.open(f.state, runId, { key: f.key });
        try {
          expect(recovered).toBeUndefined();
          const events = log.events();
          const tracker = new StateTracker(events);
          expect(tracker.state.status).toBe('running');
          expect(events[0]?.type === 'run.started' && events[0].data.repo).toBeTruthy();
          const restore = await chooseWorkspace(log.runDir, events, codingTools(), f.key);
          // Version 1 logs are from before checkpoints: the workspace saved at the pause stands in.
          expect(restore).toMatchObject({ from: anchored ? 'checkpoint' : 'pause-snapshot', files: [] });
          expect(restore).not.toHaveProperty('refusal');
        } finally {
          log.close();
        }
      },
    );

    it('resume refuses what it must, from the log alone: a sub-agent on its own', () => {
      const f = copyOf(version);
      const child = f.runs.subagent.runs.find((r) => r !== f.runs.subagent.runId)!;
      const r = gatehouse(f, ['resume', child]);
      expect(r.stderr).toContain(`run ${child} is a sub-agent of ${f.runs.subagent.runId}: resume the root run`);
      expect(r.status).toBe(1);
    });
  });
});
