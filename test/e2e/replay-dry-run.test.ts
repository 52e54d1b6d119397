import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gatehouse, jsonLines, recordedRun, treeHash, writeJson } from '../support/replay';

const RAN_WITH = { mode: 'sandboxed-auto', deny: ['bash(git push*)'] };

/**
 * `gatehouse replay RUN --mode dry-run --policy FILE` on a run the real CLI made in a real sandbox:
 * CI can gate a policy change on it (exit 1 when an action that ran would now be denied).
 */
describe('gatehouse replay --mode dry-run (real CLI, real run)', () => {
  let run: ReturnType<typeof recordedRun>;
  beforeAll(() => {
    run = recordedRun(RAN_WITH);
  }, 200_000);

  const replay = (...args: string[]) =>
    gatehouse(['replay', run.runId, '--mode', 'dry-run', '--state-dir', run.stateDir, ...args], 60_000);

  it('a stricter policy denies the test command it ran: exit 1, each changed decision with its rules', () => {
    expect(run.r.status, run.r.stderr).toBe(0);
    const before = { repo: treeHash(run.repo), run: treeHash(run.runDir) };
    const stricter = writeJson({ mode: 'sandboxed-auto', deny: ['bash(npm test*)', 'bash(git push*)'] });
    const r = replay('--policy', stricter);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    // Both runs of npm test changed: allow (the mode's default) then, the deny rule now.
    const changes = r.stdout.split('\n').filter((l) => /allow → deny/.test(l));
    expect(changes).toHaveLength(2);
    expect(changes[0]).toMatch(/call_0_0 bash .*npm test.*: allow → deny \(it ran\)/);
    expect(r.stdout).toMatch(/then: mode:sandboxed-auto\n\s+now: {2}deny\[0\] bash\(npm test\*\)/);
    expect(r.stdout).toMatch(/: denied: 4 compared, 2 differed/);
    expect({ repo: treeHash(run.repo), run: treeHash(run.runDir) }).toEqual(before);

    const json = replay('--policy', stricter, '--json');
    expect(json.status).toBe(1);
    const events = jsonLines(json.stdout);
    expect(events[0]).toMatchObject({ data: { replay: { mode: 'dry-run', policy: { source: stricter } } } });
    const decisions = events.filter((e) => e.type === 'replay.decision').map((e) => e.data);
    expect(decisions.map((d) => [d.tool, d.changed, d.ran])).toEqual([
      ['bash', true, true],
      ['read_file', false, true],
      ['edit_file', false, true],
      ['bash', true, true],
    ]);
    expect(events.find((e) => e.type === 'replay.summary')?.data).toMatchObject({ verdict: 'denied', differed: 2 });
  });

  it('the policy it ran with: match, exit 0; a policy that asks for edits: changed, exit 0', () => {
    const same = replay('--policy', writeJson(RAN_WITH));
    expect(same.status, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toMatch(/: match: 4 compared, 0 differed/);
    const asks = replay('--policy', writeJson({ mode: 'sandboxed-auto', ask: ['edit_file(src/**)'] }));
    expect(asks.status, asks.stdout + asks.stderr).toBe(0);
    expect(asks.stdout).toMatch(/edit_file .*: allow → ask \(it ran\)/);
    expect(asks.stdout).toMatch(/: changed: 4 compared, 1 differed/);
  });

  it('a policy file that does not load: exit 2, said on stderr, no replay written', () => {
    const bad = writeJson({});
    writeFileSync(bad, '{ "deny": [');
    const before = readdirSync(path.join(run.stateDir, 'runs'));
    const r = replay('--policy', bad);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/could not be loaded/);
    expect(readdirSync(path.join(run.stateDir, 'runs'))).toEqual(before);
  });
});
