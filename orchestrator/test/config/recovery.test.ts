import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors';
import { loadProjectConfig } from '../../src/config/load';
import { recoveryRecipes } from '../../src/plan/recovery-recipes';
import { repoWith, trustedFile } from './helpers';

const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  throw new Error('expected a ConfigError');
};

describe('config recovery', () => {
  it('absent: no recovery in the resolved config, and the defaults apply', () => {
    const c = loadProjectConfig({ repoDir: repoWith() });
    expect(c.recovery).toBeUndefined();
    expect(recoveryRecipes(c.recovery).transient.retries).toBe(2);
  });

  it('the trusted config sets recipes per class', () => {
    const recovery = {
      transient: { retries: 4, backoffMs: [1000, 2000], exhausted: 'fail' },
      logic: { action: 'escalate' },
    };
    const c = loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile({ recovery }) });
    expect(c.recovery).toEqual(recovery);
    expect(recoveryRecipes(c.recovery).logic.name).toBe('escalate_logic');
  });

  it('refuses what is out of bounds, every problem at once, with the JSON path', () => {
    const file = trustedFile({
      recovery: {
        transient: { retries: 11, backoffMs: [700000, -1, 1.5] },
        logic: { retries: 'one', exhausted: 'retry' },
        permission: { action: 'retry' },
        unknown: { action: 'feedback' },
        flaky: {},
        invalid_input: { retry: 1 },
      },
    });
    const p = problemsOf(() => loadProjectConfig({ repoDir: repoWith(), configFile: file }));
    expect(p).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^recovery\.transient\.retries: at most 10 retries/),
        expect.stringMatching(/^recovery\.transient\.backoffMs\[0\]: a wait is at most 600000 ms/),
        expect.stringMatching(/^recovery\.transient\.backoffMs\[1\]: expected a wait in milliseconds/),
        expect.stringMatching(/^recovery\.transient\.backoffMs\[2\]: expected a wait in milliseconds/),
        expect.stringMatching(/^recovery\.logic\.retries: expected a whole number of retries/),
        expect.stringMatching(/^recovery\.logic\.exhausted: expected one of escalate, fail, got "retry"/),
        expect.stringMatching(/^recovery\.permission\.action: this class always goes to a person/),
        expect.stringMatching(/^recovery\.unknown\.action: this class always goes to a person/),
        'recovery.flaky: unknown key; known: transient, permission, invalid_input, logic, unrecoverable, unknown',
        'recovery.invalid_input.retry: unknown key; known: action, retries, backoffMs, exhausted',
      ]),
    );
    expect(p.length).toBe(10);
  });

  it('places a key given twice by line and column, as the loader does for every key', () => {
    const file = trustedFile('{\n  "recovery": {\n    "transient": { "retries": 1, "retries": 9 }\n  }\n}\n');
    try {
      loadProjectConfig({ repoDir: repoWith(), configFile: file });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).message).toMatch(
        /trusted\.json:3:\d+: recovery\.transient\.retries: this key is given twice/,
      );
    }
  });

  it('too many waits are refused', () => {
    const file = trustedFile({ recovery: { transient: { backoffMs: Array(11).fill(1) } } });
    expect(problemsOf(() => loadProjectConfig({ repoDir: repoWith(), configFile: file }))).toEqual([
      expect.stringMatching(/^recovery\.transient\.backoffMs: at most 10 waits/),
    ]);
  });

  it('"escalate" may be written for permission and unknown', () => {
    const c = loadProjectConfig({
      repoDir: repoWith(),
      configFile: trustedFile({ recovery: { permission: { action: 'escalate', exhausted: 'fail' } } }),
    });
    expect(recoveryRecipes(c.recovery).permission).toMatchObject({ action: 'escalate', exhausted: 'fail' });
  });
});

describe("the repository's recovery only narrows", () => {
  it('fewer retries and longer waits are taken; more retries and shorter waits are ignored, with the key', () => {
    const trusted = trustedFile({ recovery: { transient: { retries: 3, backoffMs: [1000, 5000] } } });
    const repo = repoWith({
      recovery: { transient: { retries: 1, backoffMs: [2000, 10000] }, logic: { retries: 5, backoffMs: [0] } },
    });
    const c = loadProjectConfig({ repoDir: repo, configFile: trusted });
    expect(c.recovery).toEqual({ transient: { retries: 1, backoffMs: [2000, 10000] }, logic: { backoffMs: [0] } });
    expect(c.ignored).toEqual(['recovery.logic.retries 5 (above 1)']);

    const wider = loadProjectConfig({
      repoDir: repoWith({ recovery: { transient: { retries: 4, backoffMs: [1000] } } }),
      configFile: trusted,
    });
    expect(wider.recovery).toEqual({ transient: { retries: 3, backoffMs: [1000, 5000] } });
    expect(wider.ignored).toEqual([
      'recovery.transient.retries 4 (above 3)',
      'recovery.transient.backoffMs [1000] (a wait shorter than [1000,5000])',
    ]);
  });

  it('without a trusted config, the defaults are the ceiling', () => {
    const c = loadProjectConfig({
      repoDir: repoWith({ recovery: { transient: { retries: 3, backoffMs: [0, 0] }, logic: { retries: 0 } } }),
    });
    expect(c.recovery).toEqual({ logic: { retries: 0 } });
    expect(c.ignored).toEqual([
      'recovery.transient.retries 3 (above 2)',
      'recovery.transient.backoffMs [0,0] (a wait shorter than [5000,30000])',
    ]);
  });

  it('the repository may make recovery stop or escalate, never act more on its own', () => {
    const trusted = trustedFile({ recovery: { logic: { exhausted: 'fail' } } });
    const c = loadProjectConfig({
      repoDir: repoWith({
        recovery: {
          transient: { action: 'escalate', exhausted: 'fail' },
          logic: { exhausted: 'escalate' },
          invalid_input: { action: 'retry' },
        },
      }),
      configFile: trusted,
    });
    expect(c.recovery).toEqual({ transient: { action: 'escalate', exhausted: 'fail' }, logic: { exhausted: 'fail' } });
    expect(c.ignored).toEqual([
      'recovery.invalid_input.action retry (only "escalate" or the trusted feedback)',
      'recovery.logic.exhausted escalate (the trusted recipe fails the task)',
    ]);
  });

  it("a repository's bad recovery is a config error too", () => {
    const p = problemsOf(() =>
      loadProjectConfig({ repoDir: repoWith({ recovery: { permission: { action: 'retry' } } }) }),
    );
    expect(p).toEqual([expect.stringMatching(/^recovery\.permission\.action: this class always goes to a person/)]);
  });
});
