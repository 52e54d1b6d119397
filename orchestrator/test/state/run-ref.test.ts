import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOfError } from '../../src/cli/exit-codes';
import { InvalidRunIdError } from '../../src/events/paths';
import { AmbiguousRunError, resolveRun, RunNotFoundError } from '../../src/events/run-ref';
import { ensureGroup, realRepoPath } from '../../src/events/state-home';
import { fakeRun, tempDir } from './fake-runs';

/**
 * Two repositories with runs in the default layout (one group each), a third with none, and an
 * explicit state directory; each row asks for a run from somewhere and says what it must resolve to.
 */
function world() {
  const home = tempDir('gh-home-');
  const env = { HOME: home, XDG_STATE_HOME: path.join(home, 'state'), XDG_CONFIG_HOME: path.join(home, 'config') };
  const root = path.join(env.XDG_STATE_HOME, 'gatehouse');
  const repoA = realRepoPath(tempDir('gh-repo-a-'));
  const repoB = realRepoPath(tempDir('gh-repo-b-'));
  const repoC = realRepoPath(tempDir('gh-repo-c-'));
  mkdirSync(path.join(repoA, 'src', 'deep'), { recursive: true });
  const a = ensureGroup(root, repoA);
  const b = ensureGroup(root, repoB);
  const explicit = tempDir('gh-explicit-');
  fakeRun(a, 'run_a1', { startedAt: '2025-01-01T00:00:00.000Z' });
  fakeRun(a, 'run_a2', { startedAt: '2025-01-03T00:00:00.000Z' });
  // A sub-agent starts after its root: "latest" is still the root.
  fakeRun(a, 'run_a2child', { startedAt: '2025-01-03T00:00:05.000Z', parent: 'run_a2' });
  fakeRun(a, 'run_shared1', { startedAt: '2025-01-02T00:00:00.000Z' });
  fakeRun(b, 'run_b1', { startedAt: '2025-02-01T00:00:00.000Z' });
  fakeRun(b, 'run_shared2', { startedAt: '2025-02-02T00:00:00.000Z' });
  fakeRun(b, 'run_only_b', { startedAt: '2025-02-03T00:00:00.000Z' });
  fakeRun(b, 'run_x', { startedAt: '2025-02-04T00:00:00.000Z' });
  fakeRun(b, 'run_xy', { startedAt: '2025-02-05T00:00:00.000Z' });
  fakeRun(explicit, 'run_e1', { startedAt: '2025-03-01T00:00:00.000Z' });
  fakeRun(explicit, 'run_e2', { startedAt: '2025-03-02T00:00:00.000Z' });
  fakeRun(explicit, 'run_a1', { startedAt: '2025-03-03T00:00:00.000Z' });
  return { env, repoA, repoB, repoC, a, b, explicit };
}

type World = ReturnType<typeof world>;
type Row = [
  what: string,
  ref: string,
  from: (w: World) => { cwd: string; stateDir?: string; env?: Record<string, string> },
  expected: (
    w: World,
  ) => { stateDir: string; runId: string } | { error: new (...a: never[]) => Error; message: RegExp },
];

const ROWS: Row[] = [
  [
    'latest: the newest top-level run of this repository',
    'latest',
    (w) => ({ cwd: w.repoA }),
    (w) => ({ stateDir: w.a, runId: 'run_a2' }),
  ],
  [
    'latest from a sub-folder of the repository',
    'latest',
    (w) => ({ cwd: path.join(w.repoA, 'src', 'deep') }),
    (w) => ({ stateDir: w.a, runId: 'run_a2' }),
  ],
  [
    'latest in a repository without runs',
    'latest',
    (w) => ({ cwd: w.repoC }),
    () => ({ error: RunNotFoundError, message: /"latest": there are no runs in the runs of this repository/ }),
  ],
  [
    'latest in an explicit state directory',
    'latest',
    (w) => ({ cwd: w.repoA, stateDir: w.explicit }),
    (w) => ({ stateDir: w.explicit, runId: 'run_a1' }),
  ],
  ['a full id', 'run_a1', (w) => ({ cwd: w.repoA }), (w) => ({ stateDir: w.a, runId: 'run_a1' })],
  ['a unique prefix', 'run_shared1', (w) => ({ cwd: w.repoA }), (w) => ({ stateDir: w.a, runId: 'run_shared1' })],
  [
    'a prefix unique in this repository wins over other repositories',
    'run_shared',
    (w) => ({ cwd: w.repoA }),
    (w) => ({ stateDir: w.a, runId: 'run_shared1' }),
  ],
  [
    'the same prefix from the other repository',
    'run_shared',
    (w) => ({ cwd: w.repoB }),
    (w) => ({ stateDir: w.b, runId: 'run_shared2' }),
  ],
  [
    'an ambiguous prefix lists the candidates',
    'run_a',
    (w) => ({ cwd: w.repoA }),
    () => ({ error: AmbiguousRunError, message: /"run_a" matches 3 runs: run_a1, run_a2, run_a2child/ }),
  ],
  [
    'an id of another repository is found from anywhere',
    'run_only_b',
    (w) => ({ cwd: w.repoA }),
    (w) => ({ stateDir: w.b, runId: 'run_only_b' }),
  ],
  [
    'a prefix of another repository is found from a directory with no runs',
    'run_only',
    (w) => ({ cwd: w.repoC }),
    (w) => ({ stateDir: w.b, runId: 'run_only_b' }),
  ],
  [
    'an exact id wins over the longer ids it prefixes',
    'run_x',
    (w) => ({ cwd: w.repoC }),
    (w) => ({ stateDir: w.b, runId: 'run_x' }),
  ],
  [
    'ambiguous across repositories names each repository',
    'run_sh',
    (w) => ({ cwd: w.repoC }),
    (w) => ({
      error: AmbiguousRunError,
      message: new RegExp(`run_shared1 \\(${w.repoA}\\), run_shared2 \\(${w.repoB}\\)`),
    }),
  ],
  [
    'no match',
    'run_zzz',
    (w) => ({ cwd: w.repoA }),
    () => ({ error: RunNotFoundError, message: /run run_zzz not found: .*`gatehouse runs --all` lists them/ }),
  ],
  [
    'an explicit state directory is the only place searched',
    'run_only_b',
    (w) => ({ cwd: w.repoA, stateDir: w.explicit }),
    (w) => ({ error: RunNotFoundError, message: new RegExp(`no run id in ${w.explicit} is or starts`) }),
  ],
  [
    'a prefix in an explicit state directory',
    'run_e2',
    (w) => ({ cwd: w.repoB, stateDir: w.explicit }),
    (w) => ({ stateDir: w.explicit, runId: 'run_e2' }),
  ],
  [
    'ambiguous in an explicit state directory',
    'run_e',
    (w) => ({ cwd: w.repoB, stateDir: w.explicit }),
    () => ({ error: AmbiguousRunError, message: /matches 2 runs: run_e1, run_e2;/ }),
  ],
  [
    'GATEHOUSE_STATE_DIR is explicit too',
    'latest',
    (w) => ({ cwd: w.repoA, env: { GATEHOUSE_STATE_DIR: w.explicit } }),
    (w) => ({ stateDir: w.explicit, runId: 'run_a1' }),
  ],
  [
    'not a run id',
    '../etc',
    (w) => ({ cwd: w.repoA }),
    () => ({ error: InvalidRunIdError, message: /invalid run id "..\/etc"/ }),
  ],
];

describe('resolveRun: latest, ids, unique prefixes, other repositories, explicit state directories', () => {
  it.each(ROWS)('%s (%s)', (_what, ref, from, expected) => {
    const w = world();
    const f = from(w);
    const want = expected(w);
    const call = () => resolveRun(ref, { cwd: f.cwd, stateDir: f.stateDir, env: { ...w.env, ...f.env } });
    if ('error' in want) {
      expect(call).toThrow(want.error);
      expect(call).toThrow(want.message);
    } else expect(call()).toEqual(want);
  });

  it('ambiguity is a usage error (exit 2); no match is refused (exit 1), as an unknown run always was', () => {
    expect(exitCodeOfError(new AmbiguousRunError('run_', ['run_a', 'run_b']))).toBe(2);
    expect(exitCodeOfError(new RunNotFoundError('run run_q not found'))).toBe(1);
  });

  it('points at the older layout when ./.gatehouse/runs holds runs', () => {
    const w = world();
    fakeRun(path.join(w.repoC, '.gatehouse'), 'run_old', { startedAt: '2024-01-01T00:00:00.000Z' });
    expect(() => resolveRun('run_old', { cwd: w.repoC, env: w.env })).toThrow(/add --state-dir \.gatehouse/);
    expect(resolveRun('run_old', { cwd: w.repoC, env: w.env, stateDir: '.gatehouse' })).toEqual({
      stateDir: path.join(w.repoC, '.gatehouse'),
      runId: 'run_old',
    });
  });
});
