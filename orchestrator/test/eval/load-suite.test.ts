import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/eval/load-suite';
import { preflightSuite } from '../../src/eval/preflight-suite';
import { SuiteError } from '../../src/eval/suite-error';

/** A suite folder: a repository, a script and a policy beside the suite file. */
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-eval-suite-'));
  made.push(dir);
  mkdirSync(path.join(dir, 'repo'));
  writeFileSync(path.join(dir, 'repo', 'a.txt'), 'a\n');
  writeFileSync(path.join(dir, 'script.json'), JSON.stringify({ turns: [{ final: 'done' }] }));
  writeFileSync(path.join(dir, 'policy.json'), JSON.stringify({ mode: 'confirm-novel', allow: ['read_file(**)'] }));
  return dir;
}
const task = (extra: Record<string, unknown> = {}) => ({
  id: 't1',
  repository: 'repo',
  task: 'do it',
  check: 'true',
  model: 'scripted:script.json',
  ...extra,
});
function suiteFile(dir: string, suite: unknown): string {
  const f = path.join(dir, 'suite.json');
  writeFileSync(f, typeof suite === 'string' ? suite : JSON.stringify(suite, null, 2));
  return f;
}
function problems(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SuiteError);
    expect((e as SuiteError).kind).toBe('usage');
    return (e as SuiteError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a SuiteError');
}

describe('loadSuite', () => {
  it('resolves every path against the suite file, and the model: the task, else --model, else the suite', () => {
    const dir = folder();
    const f = suiteFile(dir, {
      name: 'n',
      model: 'scripted:script.json',
      budgets: { maxTurns: 3, wallClockSeconds: 60 },
      tasks: [
        task({ policy: 'policy.json', budgets: { maxTurns: 5 } }),
        task({ id: 't2', model: undefined }),
        task({ id: 't3', repository: path.join(dir, 'repo'), model: 'openai:gpt-x' }),
      ],
    });
    const s = loadSuite(f, { cwd: '/elsewhere' });
    expect(s.file).toBe(f);
    expect(s.name).toBe('n');
    expect(s.tasks.map((t) => [t.id, t.model, t.modelFrom])).toEqual([
      ['t1', `scripted:${path.join(dir, 'script.json')}`, 'task'],
      ['t2', `scripted:${path.join(dir, 'script.json')}`, 'suite'],
      ['t3', 'openai:gpt-x', 'task'],
    ]);
    expect(s.tasks[0]).toMatchObject({
      repository: path.join(dir, 'repo'),
      policy: path.join(dir, 'policy.json'),
      budgets: { maxTurns: 5, wallClockSeconds: 60 },
    });
    expect(s.tasks[2]!.repository).toBe(path.join(dir, 'repo'));
    // --model is over the suite's model, under the task's own; its scripted path is from the current directory.
    const flagged = loadSuite(f, { model: 'scripted:other.json', cwd: '/elsewhere' });
    expect(flagged.tasks.map((t) => [t.model, t.modelFrom])).toEqual([
      [`scripted:${path.join(dir, 'script.json')}`, 'task'],
      ['scripted:/elsewhere/other.json', '--model'],
      ['openai:gpt-x', 'task'],
    ]);
  });

  it('names every problem at once, with its JSON path and the closest right key', () => {
    const dir = folder();
    const f = suiteFile(dir, {
      nmae: 'x',
      tasks: [
        { id: 'a', repositry: 'repo', task: 'x', check: 'true', model: 'scripted:script.json' },
        task({ id: 'has space', chekc: 'x', budgets: { maxTurn: 2, wallClockSeconds: 10 ** 7 } }),
        { id: 'c', repo: 'repo', task: 'x', check: 'true', model: 'scripted:script.json' },
      ],
    });
    expect(problems(() => loadSuite(f)).sort()).toEqual(
      [
        'nmae: unknown key; did you mean name?',
        'tasks[0].repositry: unknown key; did you mean repository?',
        'tasks[0].repository: expected a directory (relative to the suite file, or absolute)',
        'tasks[1].id: expected 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit, ' +
          'got "has space"',
        'tasks[1].chekc: unknown key; did you mean check?',
        'tasks[1].budgets.maxTurn: unknown key; did you mean maxTurns?',
        'tasks[1].budgets.wallClockSeconds: expected a whole number of seconds, 1 to 604800 (7 days), got 10000000',
        // Too far from any key for "did you mean": every key is listed instead.
        'tasks[2].repo: unknown key; known: id, repository, task, check, config, policy, model, budgets',
        'tasks[2].repository: expected a directory (relative to the suite file, or absolute)',
      ].sort(),
    );
  });

  it('refuses duplicate ids, missing paths and a task with no model', () => {
    const dir = folder();
    const f = suiteFile(dir, {
      tasks: [
        task(),
        task({ repository: 'nope', policy: 'missing.json', config: 'repo' }),
        task({ id: 't3', model: undefined }),
      ],
    });
    expect(problems(() => loadSuite(f))).toEqual([
      'tasks[1].id: "t1" is the id of tasks[0] too; ids are unique',
      `tasks[1].repository: no such directory: ${path.join(dir, 'nope')}`,
      `tasks[1].config: ${path.join(dir, 'repo')} is not a file`,
      `tasks[1].policy: no such file: ${path.join(dir, 'missing.json')}`,
      'tasks[2].model: no model: give the task a "model", the suite a "model", or pass --model',
    ]);
  });

  it('says where the JSON breaks, and what a missing file or an empty list is', () => {
    const dir = folder();
    const broken = suiteFile(dir, '{\n  "tasks": [\n    {"id": "a",}\n  ]\n}\n');
    const e = (() => {
      try {
        loadSuite(broken);
      } catch (err) {
        return err as SuiteError;
      }
    })();
    expect(e?.problems[0]?.line).toBe(3);
    expect(e?.problems[0]?.message).toMatch(/^not valid JSON/);
    expect(e?.message).toContain(`${broken}:3:`);
    expect(e?.message).toContain('nothing was run');
    expect(problems(() => loadSuite(path.join(dir, 'absent.json')))).toEqual([': cannot read it: no such file']);
    expect(problems(() => loadSuite(suiteFile(dir, { tasks: [] })))).toEqual([
      'tasks: expected one task or more, got []',
    ]);
    expect(problems(() => loadSuite(suiteFile(dir, '{"tasks": [], "tasks": []}')))).toContain(
      'tasks: this key is given twice',
    );
  });
});

describe('preflightSuite: what gatehouse run would refuse, asked before any task runs', () => {
  it('a bad script, a bad policy, a bad config and a cost budget without a price, each at its task', async () => {
    const dir = folder();
    writeFileSync(path.join(dir, 'bad-script.json'), JSON.stringify({ turns: [{ fianl: 'x' }] }));
    writeFileSync(path.join(dir, 'bad-policy.json'), JSON.stringify({ mode: 'confirm-novel', allow: ['bsh(ls)'] }));
    writeFileSync(path.join(dir, 'bad-config.json'), JSON.stringify({ imgae: 'preset:node' }));
    const f = suiteFile(dir, {
      tasks: [
        task(),
        task({ id: 't2', model: 'scripted:bad-script.json' }),
        task({ id: 't3', policy: 'bad-policy.json' }),
        task({ id: 't4', config: 'bad-config.json' }),
        task({ id: 't5', budgets: { maxCostUsd: 1 } }),
      ],
    });
    const suite = loadSuite(f);
    const e = await preflightSuite(suite).then(
      () => undefined,
      (err: unknown) => err as SuiteError,
    );
    expect(e).toBeInstanceOf(SuiteError);
    const at = e!.problems.map((p) => p.path);
    expect(at).toEqual(['tasks[1].model', 'tasks[2].policy', 'tasks[3].config', 'tasks[4].budgets.maxCostUsd']);
    expect(e!.problems[0]!.message).toContain('turns[0]');
    expect(e!.problems[1]!.message).toContain('bsh');
    expect(e!.problems[2]!.message).toContain('did you mean image');
    expect(e!.problems[3]!.message).toContain('needs the price');
  });

  it('a valid suite passes', async () => {
    const dir = folder();
    await expect(preflightSuite(loadSuite(suiteFile(dir, { tasks: [task({ policy: 'policy.json' })] })))).resolves.toBe(
      undefined,
    );
  });
});
