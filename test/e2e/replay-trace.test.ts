import { beforeAll, describe, expect, it } from 'vitest';
import { gatehouse, jsonLines, recordedRun, treeHash } from '../support/replay';

/**
 * `gatehouse replay RUN --mode trace` on a run the real CLI made in a real sandbox: the rebuilt state
 * and context hashes match the recorded ones, the replay is a run of its own (listed, verifiable),
 * and it changes neither the repository nor the replayed run's folder.
 */
describe('gatehouse replay --mode trace (real CLI, real run)', () => {
  let run: ReturnType<typeof recordedRun>;
  beforeAll(() => {
    run = recordedRun({ mode: 'sandboxed-auto', deny: ['bash(git push*)'] });
  }, 200_000);

  it('every turn rebuilds to its recorded hashes: exit 0, listed by `gatehouse runs`, and `verify` passes', () => {
    expect(run.r.status, run.r.stderr).toBe(0);
    const requests = run.events.filter((e) => e.type === 'model.request').map((e) => e.data);
    expect(requests).toHaveLength(5);
    const before = { repo: treeHash(run.repo), run: treeHash(run.runDir) };

    const r = gatehouse(['replay', run.runId, '--mode', 'trace', '--json', '--state-dir', run.stateDir], 60_000);
    expect(r.status, r.stderr).toBe(0);
    const events = jsonLines(r.stdout);
    const replayId = events[0]!.runId;
    expect(replayId).not.toBe(run.runId);
    expect(events[0]).toMatchObject({ type: 'run.started', data: { replay: { of: run.runId, mode: 'trace' } } });
    const turns = events.filter((e) => e.type === 'replay.turn').map((e) => e.data);
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4, 5]);
    for (const [i, t] of turns.entries()) {
      expect(t.context).toEqual({ recorded: requests[i]!.contextSha256, replayed: requests[i]!.contextSha256 });
      expect(t.state).toEqual({ recorded: requests[i]!.stateSha256, replayed: requests[i]!.stateSha256 });
      expect(t.match).toBe(true);
    }
    // What the model saw and proposed, turn by turn.
    expect(turns.map((t) => t.observations)).toEqual([
      [],
      ['obs-1'],
      ['obs-1', 'obs-2'],
      ['obs-1', 'obs-2', 'obs-3'],
      ['obs-1', 'obs-2', 'obs-3', 'obs-4'],
    ]);
    expect(turns[2]!.calls).toMatchObject([{ name: 'edit_file', input: { path: 'src/math.js' } }]);
    expect(events.at(-2)).toMatchObject({
      type: 'replay.summary',
      data: { mode: 'trace', of: run.runId, compared: 5, differed: 0, verdict: 'match' },
    });
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', stopReason: 'replay_match' },
    });

    const runs = gatehouse(['runs', '--json', '--state-dir', run.stateDir], 30_000);
    expect(runs.status, runs.stderr).toBe(0);
    expect(runs.stdout).toContain(replayId);
    const verify = gatehouse(['verify', replayId, '--state-dir', run.stateDir], 30_000);
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    // Nothing was written to the repository or beside the replayed log.
    expect({ repo: treeHash(run.repo), run: treeHash(run.runDir) }).toEqual(before);
  });

  it('without --json: one line per turn and the verdict', () => {
    const r = gatehouse(['replay', run.runId, '--mode', 'trace', '--state-dir', run.stateDir], 60_000);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/turn 3: match \(2 observations seen, edit_file\)/);
    expect(r.stdout).toMatch(/\(trace of run_\S+\): match: 5 compared, 0 differed/);
  });
});
