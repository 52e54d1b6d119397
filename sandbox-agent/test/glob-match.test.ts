import { describe, expect, it } from 'vitest';
import { compileGlob } from '../src/primitives/glob-match';

describe('compileGlob', () => {
  it.each([
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['**/*.ts', 'src/a.tsx', false],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/x/a.ts', false],
    ['src/**', 'src/x/a.ts', true],
    ['*.{js,ts}', 'a.js', true],
    ['*.{js,ts}', 'a.md', false],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['[a-c]*.md', 'b.md', true],
    ['[!a-c]*.md', 'b.md', false],
    ['**/.env', '.env', true],
    ['*', '.hidden', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
  ])('%s ~ %s -> %s', (pattern, path, expected) => {
    expect(compileGlob(pattern)(path)).toBe(expected);
  });

  it('stays fast on patterns that make backtracking matchers explode', () => {
    const started = process.hrtime.bigint();
    const match = compileGlob('*a*a*a*a*a*a*a*a*a*a*ab');
    for (let i = 0; i < 200; i++) expect(match('a'.repeat(200))).toBe(false);
    // Generous bound, only to prove it does not hang (a regex matcher takes minutes here).
    expect(Number(process.hrtime.bigint() - started) / 1e9).toBeLessThan(10);
  });
});
