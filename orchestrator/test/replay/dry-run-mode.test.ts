import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventDataOf } from '@gatehouse/shared';
import { exitCodeOfError } from '../../src/cli/exit-codes';
import { RunLog } from '../../src/events/store';
import { replayExitCode, replayRun } from '../../src/replay/replay-run';
import type { ReplayOptions } from '../../src/replay/replay-types';
import { policyFile, recordRun, writeTree, type RecordedRun, type RunSpec } from './recorded-runs';

const files = { 'src/math.js': 'export const add = (a, b) => a - b;\n' };
const passes: RunSpec['exec'] = ({ command }) =>
  command === 'npm test' ? { exitCode: 0, output: 'pass 1\n' } : { exitCode: 127, output: 'not found\n' };
const script = {
  turns: [
    { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] },
    { toolCalls: [{ name: 'edit_file', input: { path: 'src/math.js', oldText: 'a - b', newText: 'a + b' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
    { toolCalls: [{ name: 'no_such_tool', input: {} }] },
    { final: 'Fixed add() in src/math.js (obs-2). The tests pass (obs-3).' },
  ],
};
const grantOnce = { decision: 'grant', scope: 'once', approver: 'user:test', channel: 'terminal' } as const;

const AUTO = { mode: 'sandboxed-auto' };
const ASK_TESTS = { mode: 'sandboxed-auto', ask: ['bash(npm test*)'] };
const DENY_TESTS = { mode: 'sandboxed-auto', deny: ['bash(npm test*)'] };
const ASK_EDITS = { mode: 'sandboxed-auto', ask: ['edit_file(src/**)'] };

/** The three recorded runs: everything allowed; the test command asked and granted; the test command denied. */
const RUNS: Record<string, Pick<RunSpec, 'policy' | 'answers'>> = {
  allowed: { policy: AUTO },
  asked: { policy: ASK_TESTS, answers: [grantOnce] },
  denied: { policy: DENY_TESTS },
};

async function dryRun(run: RecordedRun, o: Partial<ReplayOptions> = {}) {
  const r = await replayRun(run.runId, { mode: 'dry-run', stateDir: run.stateDir, ...o });
  const events = RunLog.readEvents(run.stateDir, r.replayRunId);
  const decisions = events.filter((e) => e.type === 'replay.decision').map((e) => e.data);
  return { r, events, decisions, exit: replayExitCode(r.outcome) };
}

const bashOf = (ds: EventDataOf<'replay.decision'>[]) => ds.find((d) => d.tool === 'bash')!;

describe('replay --mode dry-run: recorded runs × policies', () => {
  // [run, policy given, verdict, the policy, exit, bash then → now, the bash call's rule now]
  const table: [string, string, string, unknown, number, string, string, string][] = [
    ['allowed', 'the same', 'match', AUTO, 0, 'allow', 'allow', 'mode:sandboxed-auto'],
    ['allowed', 'stricter (deny)', 'denied', DENY_TESTS, 1, 'allow', 'deny', 'deny[0] bash(npm test*)'],
    ['allowed', 'stricter (ask)', 'changed', ASK_TESTS, 0, 'allow', 'ask', 'ask[0] bash(npm test*)'],
    ['asked', 'the same', 'match', ASK_TESTS, 0, 'ask', 'ask', 'ask[0] bash(npm test*)'],
    ['asked', 'looser', 'changed', AUTO, 0, 'ask', 'allow', 'mode:sandboxed-auto'],
    ['asked', 'stricter', 'denied', DENY_TESTS, 1, 'ask', 'deny', 'deny[0] bash(npm test*)'],
    ['denied', 'the same', 'match', DENY_TESTS, 0, 'deny', 'deny', 'deny[0] bash(npm test*)'],
    ['denied', 'looser', 'changed', AUTO, 0, 'deny', 'allow', 'mode:sandboxed-auto'],
  ];
  it.each(table)('%s run, %s policy: %s', async (which, _name, verdict, policy, exit, then, now, rule) => {
    const run = await recordRun({ script, files, exec: passes, ...RUNS[which] });
    const d = await dryRun(run, { policyFile: policyFile(policy) });
    expect(d.r.outcome.verdict).toBe(verdict);
    expect(d.exit).toBe(exit);
    const bash = bashOf(d.decisions);
    expect(bash.then.decision).toBe(then);
    expect(bash.now).toEqual({ decision: now, rule, by: 'policy' });
    expect(bash.changed).toBe(then !== now);
    expect(bash.ran).toBe(which !== 'denied');
    // One decision per intent; the unknown tool is rejected then and now, whatever the policy.
    expect(d.decisions.map((x) => x.tool)).toEqual(['read_file', 'edit_file', 'bash', 'no_such_tool']);
    expect(d.decisions[3]).toMatchObject({
      then: { decision: 'rejected', rule: 'validation:unknown_tool', by: 'runtime' },
      now: { decision: 'rejected', rule: 'validation:unknown_tool', by: 'runtime' },
      changed: false,
      ran: false,
    });
    expect(d.r.outcome).toMatchObject({ compared: 4, differed: then === now ? 0 : 1, skipped: 0 });
    // The replay records the policy it decided with.
    const started = d.events[0]!.data as EventDataOf<'run.started'>;
    expect(started.replay?.policy?.source).toMatch(/policy\.json$/);
  });

  it('who decided then: the person who granted an asked call, the policy otherwise', async () => {
    const run = await recordRun({ script, files, exec: passes, ...RUNS.asked });
    const d = await dryRun(run, { policyFile: policyFile(ASK_TESTS) });
    expect(bashOf(d.decisions).then).toEqual({ decision: 'ask', rule: 'ask[0] bash(npm test*)', by: 'user:test' });
    expect(d.decisions[0]!.then).toEqual({ decision: 'allow', rule: 'mode:sandboxed-auto', by: 'policy' });
    // The action hash is the one the recorded approval was bound to.
    const approval = run
      .events()
      .find((e) => e.type === 'tool.approval' && e.data.callId === bashOf(d.decisions).callId);
    expect(bashOf(d.decisions).actionHash).toBe((approval?.data as EventDataOf<'tool.approval'>).actionHash);
  });

  it('an edit that would now be asked changes the decision but denies nothing that ran: exit 0', async () => {
    const run = await recordRun({ script, files, exec: passes, ...RUNS.allowed });
    const d = await dryRun(run, { policyFile: policyFile(ASK_EDITS) });
    expect(d.r.outcome).toMatchObject({ verdict: 'changed', differed: 1 });
    expect(d.decisions.find((x) => x.tool === 'edit_file')).toMatchObject({
      then: { decision: 'allow' },
      now: { decision: 'ask', rule: 'ask[0] edit_file(src/**)' },
      ran: true,
      changed: true,
    });
  });

  it("without --policy: the repository's policy as `gatehouse run` would load it today", async () => {
    const run = await recordRun({ script, files, exec: passes, ...RUNS.allowed });
    expect((await dryRun(run)).r.outcome.verdict).toBe('match');
    // The repository now denies the test command (its own policy: deny and ask rules are taken from it).
    writeTree(run.repo, { '.gatehouse/policy.json': JSON.stringify({ deny: ['bash(npm test*)'] }) });
    const d = await dryRun(run);
    expect(d.r.outcome.verdict).toBe('denied');
    expect(bashOf(d.decisions).now.rule).toBe('deny[0] bash(npm test*)');
  });

  it("a sub-agent's calls are decided under the policy narrowed to its paths, as when it ran", async () => {
    const run = await recordRun({
      script: {
        turns: [
          {
            toolCalls: [
              {
                name: 'delegate',
                input: {
                  task: 'write the readme',
                  tools: ['read_file', 'write_file'],
                  paths: ['src/**'],
                  budget: { turns: 3, toolCalls: 3, tokens: 100_000, seconds: 60 },
                  expect: 'what changed',
                },
              },
            ],
          },
          { final: 'The sub-agent was refused (obs-1).' },
        ],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'write_file', input: { path: 'README.md', content: '# new\n' } }] },
              { final: 'It was denied (obs-1).' },
            ],
          },
        ],
      },
      files,
      policy: AUTO,
    });
    const child = run.children()[0]!;
    const r = await replayRun(child, { mode: 'dry-run', stateDir: run.stateDir, policyFile: policyFile(AUTO) });
    const decisions = RunLog.readEvents(run.stateDir, r.replayRunId).filter((e) => e.type === 'replay.decision');
    expect(decisions.map((e) => e.data)).toMatchObject([
      { tool: 'write_file', then: { decision: 'deny', rule: 'handoff:paths' }, now: { rule: 'handoff:paths' } },
    ]);
    expect(r.outcome.verdict).toBe('match');
  });
});

describe('replay --mode dry-run: what it refuses, and what it never touches', () => {
  const cases: [string, (run: RecordedRun) => Partial<ReplayOptions>, RegExp][] = [
    ['a policy file that does not exist', () => ({ policyFile: '/nonexistent/policy.json' }), /no such file/],
    [
      'a policy file that is not JSON',
      () => {
        const f = policyFile({});
        writeFileSync(f, '{ "deny": [');
        return { policyFile: f };
      },
      /could not be loaded/,
    ],
    ['a policy with a bad rule', () => ({ policyFile: policyFile({ deny: ['bash(('] }) }), /could not be loaded/],
    [
      'no --policy, and the repository is gone',
      (run) => {
        rmSync(run.repo, { recursive: true, force: true });
        return {};
      },
      /is gone.*--policy FILE/,
    ],
    ['an option of another mode', () => ({ modelSpec: 'scripted:x.json' }), /does not take --model/],
  ];
  it.each(cases)('%s: a usage error (exit 2), and no replay is written', async (_name, options, message) => {
    const run = await recordRun({ script, files, exec: passes, policy: AUTO });
    const before = readdirSync(path.join(run.stateDir, 'runs'));
    const o = options(run);
    const error = await replayRun(run.runId, { mode: 'dry-run', stateDir: run.stateDir, ...o }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(message);
    expect(exitCodeOfError(error)).toBe(2);
    expect(readdirSync(path.join(run.stateDir, 'runs'))).toEqual(before);
  });

  it('a trace given --policy is a usage error too', async () => {
    const run = await recordRun({ script, files, exec: passes, policy: AUTO });
    const error = await replayRun(run.runId, { mode: 'trace', stateDir: run.stateDir, policyFile: 'p.json' }).catch(
      (e: Error) => e,
    );
    expect(exitCodeOfError(error)).toBe(2);
    expect((error as Error).message).toMatch(/--mode trace does not take --policy/);
  });

  it("neither dry-run nor trace writes anything to the repository or to the replayed run's folder", async () => {
    const run = await recordRun({ script, files, exec: passes, policy: AUTO });
    writeTree(run.repo, { '.gatehouse/policy.json': JSON.stringify({ ask: ['edit_file(**)'] }) });
    const before = { repo: treeHash(run.repo), run: treeHash(run.runDir) };
    const d = await dryRun(run);
    expect(d.r.outcome.verdict).toBe('changed');
    await dryRun(run, { policyFile: policyFile(DENY_TESTS) });
    await replayRun(run.runId, { mode: 'trace', stateDir: run.stateDir });
    expect({ repo: treeHash(run.repo), run: treeHash(run.runDir) }).toEqual(before);
  });
});

/** A hash of every file under a folder, by path and content (and of the folder's listing itself). */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      const rel = path.relative(dir, p);
      if (statSync(p).isDirectory()) {
        h.update(`dir ${rel}\n`);
        walk(p);
      } else h.update(`file ${rel} ${createHash('sha256').update(readFileSync(p)).digest('hex')}\n`);
    }
  };
  walk(dir);
  return h.digest('hex');
}
