import { describe, expect, it } from 'vitest';
import { VAGUE_TITLE_EXAMPLES, vagueTitleProblem } from '../../src/plan/vague-title';

describe('vagueTitleProblem', () => {
  it.each([...VAGUE_TITLE_EXAMPLES.concrete])('accepts the concrete title %j', (t) => {
    expect(vagueTitleProblem(t)).toBeUndefined();
  });

  it.each([...VAGUE_TITLE_EXAMPLES.vague])('refuses the vague title %j', (t) => {
    expect(vagueTitleProblem(t)).toBeDefined();
  });

  it('says what to write instead, quoting the title', () => {
    const p = vagueTitleProblem('Clean code')!;
    expect(p).toContain('"Clean code" is vague');
    expect(p).toContain('Remove unused imports from src/a.ts');
  });

  it.each([
    ['CLEAN CODE!', 'case and punctuation do not hide a vague phrase'],
    ['  make   it   faster  ', 'nor do spaces'],
    ['Improve overall performance and quality', 'only words with no object'],
    ['Optimize everything', 'no object'],
    ['Fix', 'one word'],
    ["Don't refactor", 'an apostrophe is not a quoted name'],
  ])('refuses %j (%s)', (t) => {
    expect(vagueTitleProblem(t)).toBeDefined();
  });

  it.each([
    ['Refactor `loadConfig`', 'a quoted identifier is an object'],
    ['Optimize parse_args', 'a snake_case identifier'],
    ['Speed up --watch', 'a flag'],
    ['Fix issue #42', 'an issue number'],
    ['Improve performance of src/db/query.ts', 'a path makes a vague verb concrete'],
    ['Добавить тест для функции parseDate', 'Cyrillic words count as words'],
    ['ログイン画面のテストを追加する', 'Japanese has no spaces: characters count'],
  ])('accepts %j (%s)', (t) => {
    expect(vagueTitleProblem(t)).toBeUndefined();
  });

  it('bounds the quoted title in its message', () => {
    const p = vagueTitleProblem('fix '.repeat(70))!;
    expect(p.length).toBeLessThan(400);
    expect(p).toContain('…');
  });
});
