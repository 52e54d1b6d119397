import { describe, expect, it } from 'vitest';
import { validatePlan } from '../../src/plan/validate-plan';

const scope = { tools: ['read_file', 'edit_file', 'bash', 'grep'] };
const task = (id: string, title: string, more: Record<string, unknown> = {}) => ({ id, title, ...more });
const good = [
  task('t1', 'Find the unused imports in src/ with grep'),
  task('t2', 'Remove unused imports from src/a.ts', { dependsOn: ['t1'], tools: ['edit_file'], paths: ['src/**'] }),
  task('t3', 'Run npm test and confirm it passes', { dependsOn: ['t2'], check: 'npm test' }),
];
const problems = (input: unknown): string[] => {
  const r = validatePlan(input, scope);
  if (r.ok) throw new Error('expected the plan to be refused');
  return r.problems;
};

describe('validatePlan', () => {
  it('accepts a concrete plan of 3 tasks, filling dependsOn', () => {
    const r = validatePlan({ tasks: good }, scope);
    expect(r).toEqual({
      ok: true,
      tasks: [{ ...good[0], dependsOn: [] }, { ...good[1] }, { ...good[2] }],
    });
  });

  it.each([0, 1, 2, 8, 50])('refuses %i tasks, with the count and the reason', (n) => {
    const tasks = Array.from({ length: n }, (_, i) => task(`t${i + 1}`, `Edit section ${i + 1} of docs/guide.md`));
    const p = problems({ tasks });
    expect(p[0]).toMatch(new RegExp(`^the plan has ${n} tasks?; a plan has 3 to 7: `));
    expect(p[0]).toMatch(n < 3 ? /split the work/ : /merge related steps/);
  });

  it('accepts 7 tasks', () => {
    const tasks = Array.from({ length: 7 }, (_, i) => task(`t${i + 1}`, `Edit section ${i + 1} of docs/guide.md`));
    expect(validatePlan({ tasks }, scope).ok).toBe(true);
  });

  it('checks only the first 20 of a huge plan, and bounds the problems', () => {
    const tasks = Array.from({ length: 100_000 }, (_, i) => task(`t${i}`, 'Clean code'));
    const p = problems({ tasks });
    expect(p[0]).toContain('the plan has 100000 tasks');
    expect(p[1]).toBe('only the first 20 of the 100000 tasks were checked');
    expect(p.length).toBeLessThanOrEqual(41);
  });

  it('lists every problem at once, not the first', () => {
    const p = problems({
      tasks: [
        task('t1', 'Clean code'),
        task('t1', 'Make it faster', { dependsOn: ['t9'] }),
        task('t3', 'Run the tests in test/unit', { tools: ['curl'], paths: ['/etc/**', '../x', 'src/[a'] }),
      ],
    });
    expect(p).toEqual([
      expect.stringMatching(/^task 1 \(t1\): "Clean code" is vague/),
      "task 2 (t1): the id t1 is already task 1's: give each task its own id",
      expect.stringMatching(/^task 2 \(t1\): "Make it faster" is vague/),
      'task 2 (t1): it depends on t9, which is not a task of this plan (its ids: t1, t3)',
      'task 3 (t3): it names the tool "curl", which this run does not have ' +
        "(the run's tools: read_file, edit_file, bash, grep)",
      expect.stringMatching(/^task 3 \(t3\): path "\/etc\/\*\*": a glob is relative to the repository root/),
      expect.stringMatching(/^task 3 \(t3\): path "\.\.\/x": a glob cannot leave the repository/),
      expect.stringMatching(/^task 3 \(t3\): path "src\/\[a": a \[ is not closed/),
    ]);
  });

  it('names a cycle in order', () => {
    const p = problems({
      tasks: [
        task('t1', 'Write the parser in src/parse.ts', { dependsOn: ['t2'] }),
        task('t2', 'Write the lexer in src/lex.ts', { dependsOn: ['t3'] }),
        task('t3', 'Write the token types in src/token.ts', { dependsOn: ['t1'] }),
      ],
    });
    expect(p).toEqual([expect.stringContaining('dependency cycle t1 → t2 → t3 → t1 (each depends on the next)')]);
  });

  it('names a two-task cycle once, and a self-dependency', () => {
    const p = problems({
      tasks: [
        task('a', 'Write the parser in src/parse.ts', { dependsOn: ['b'] }),
        task('b', 'Write the lexer in src/lex.ts', { dependsOn: ['a'] }),
        task('c', 'Write the token types in src/token.ts', { dependsOn: ['c'] }),
      ],
    });
    expect(p).toEqual([
      'task 3 (c): it depends on itself: remove c from its dependsOn',
      expect.stringContaining('dependency cycle a → b → a'),
    ]);
  });

  it('refuses an order that lists a task before its dependency', () => {
    const p = problems({ tasks: [good[2], good[0], good[1]] });
    expect(p).toEqual(['t3 depends on t2, which comes after it: tasks run in the order listed, so list t2 before t3']);
  });

  it('refuses unknown fields, at the top and in a task', () => {
    const p = problems({ tasks: [{ ...good[0], priority: 1 }, good[1], good[2]], goal: 'x' });
    expect(p).toEqual([
      'unknown field "goal": submit_plan takes only "tasks" (a list of 3-7 tasks)',
      'task 1 (t1): unknown field "priority" (a task has id, title, check, dependsOn, tools, paths)',
    ]);
  });

  it('refuses what is not a plan at all', () => {
    expect(problems(null)[0]).toMatch(/takes an object \{"tasks"/);
    expect(problems([good])[0]).toMatch(/takes an object/);
    expect(problems({})).toEqual([expect.stringMatching(/^no "tasks"/)]);
    expect(problems({ tasks: 'a,b,c' })).toEqual(['"tasks" must be a list of tasks, got string']);
  });

  it('refuses weird ids and missing titles, naming the task', () => {
    const p = problems({
      tasks: [task('../t1', 'Run npm test'), { id: 't2' }, task('t3 ', 'Write docs/a.md'), 7],
    });
    expect(p).toEqual([
      'task 1: id: a task id is 1-32 letters, digits, _ . - (e.g. t1)',
      'task 2 (t2): title is missing',
      'task 3: id: a task id is 1-32 letters, digits, _ . - (e.g. t1)',
      'task 4: expected a task object {"id": "t1", "title": "…"}, got number',
    ]);
  });

  it('treats __proto__ and constructor keys as data, not as fields', () => {
    const evil: unknown = JSON.parse(
      '{"id": "t1", "title": "Run npm test in the repo", "__proto__": {"check": "rm -rf /"}}',
    );
    const p = problems({ tasks: [evil, good[1], good[2]] });
    expect(p).toEqual([
      'task 1 (t1): unknown field "__proto__" (a task has id, title, check, dependsOn, tools, paths)',
    ]);
    const r = validatePlan({ tasks: [task('constructor', 'Run npm test in the repo'), good[1], good[2]] }, scope);
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.problems).toEqual([expect.stringContaining('it depends on t1, which is not a task')]);
  });

  it('refuses empty tools or paths lists, and a blank check', () => {
    const p = problems({ tasks: [{ ...good[0], tools: [], paths: [], check: '  ' }, good[1], good[2]] });
    expect(p).toEqual([
      expect.stringContaining('the check is blank'),
      expect.stringContaining('"tools" is empty'),
      expect.stringContaining('"paths" is empty'),
    ]);
  });

  it('accepts unicode titles', () => {
    const r = validatePlan(
      {
        tasks: [
          task('t1', 'Übersetze die Fehlermeldungen in src/i18n/de.json'),
          task('t2', '为登录页面添加单元测试', { dependsOn: ['t1'] }),
          task('t3', 'Запустить npm test и проверить результат', { dependsOn: ['t2'] }),
        ],
      },
      scope,
    );
    expect(r.ok).toBe(true);
  });

  it('does not accept a tool only because it is a prototype key of the scope', () => {
    const p = problems({ tasks: [{ ...good[0], tools: ['toString'] }, good[1], good[2]] });
    expect(p).toEqual([expect.stringContaining('names the tool "toString", which this run does not have')]);
  });

  it('refuses glob syntax the task-scope matcher would read literally ([abc], {a,b})', () => {
    const p = problems({
      tasks: [{ ...good[0], paths: ['src/{a,b}.js', 'src/[ab].js', 'src/*.js'] }, good[1], good[2]],
    });
    expect(p).toEqual([
      expect.stringContaining('path "src/{a,b}.js": only *, ** and ? are wildcards here'),
      expect.stringContaining('path "src/[ab].js": only *, ** and ? are wildcards here'),
    ]);
  });

  it('refuses a check in a run without bash, which could never run it (the task could never complete)', () => {
    const r = validatePlan({ tasks: [{ ...good[0], check: 'npm test' }, good[1], good[2]] }, { tools: ['read_file'] });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).toContain('this run has no bash to run it: leave the check out');
  });
});
