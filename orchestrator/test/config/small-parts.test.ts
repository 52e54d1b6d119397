import { describe, expect, it } from 'vitest';
import { closeMatches } from '../../src/problems/close-match';
import { ConfigError } from '../../src/config/errors';
import { globProblem } from '../../src/config/glob-syntax';
import { imageProblem } from '../../src/config/image-ref';
import { readSetupEnv } from '../../src/config/setup-env';

describe('copy globs', () => {
  it.each(['dist/**', '*.log', '**/node_modules', 'src/{a,b}/*.ts', '[]x]', 'a\\[b', '.env*', '[!a]'])(
    '%s is a glob',
    (g) => {
      expect(globProblem(g)).toBeUndefined();
    },
  );
  it.each([
    ['', /expected a glob/],
    ['/etc/**', /relative to the repository root/],
    ['a/../../b', /cannot leave the repository/],
    ['src/[ab', /\[ is not closed/],
    ['{a,b', /\{ is not closed/],
    ['a}', /\} has no \{/],
    ['[a/b]', /cannot contain \//],
    ['a\\', /lone \\/],
  ])('%j: %s', (g, problem) => {
    expect(globProblem(g)).toMatch(problem);
  });
});

describe('images', () => {
  it.each([
    'preset:node',
    'preset:python',
    'python:3.12-slim',
    'golang',
    'ghcr.io/org/ci-image:v1',
    'localhost:5000/x/y@sha256:' + 'a'.repeat(64),
  ])('%s is an image', (i) => expect(imageProblem(i)).toBeUndefined());
  it.each(['preset:go', 'UPPER/case', 'a b', 'x:', ':tag', 'image@sha256:short'])('%j is not', (i) => {
    expect(imageProblem(i)).toBeDefined();
  });
});

describe('close matches for an unknown key', () => {
  it('finds swaps, slips and case', () => {
    expect(closeMatches('imgae', ['image', 'setup', 'check'])).toEqual(['image']);
    expect(closeMatches('memorymb', ['memoryMb', 'cpus'])).toEqual(['memoryMb']);
    expect(closeMatches('egres', ['egress', 'copy'])).toEqual(['egress']);
    expect(closeMatches('zzzz', ['image', 'setup'])).toEqual([]);
  });
});

describe('--setup-env', () => {
  it('reads each named variable', () => {
    expect(
      readSetupEnv(['NPM_TOKEN', 'PIP_INDEX_URL'], { NPM_TOKEN: 's3cret', PIP_INDEX_URL: 'http://x', OTHER: '1' }),
    ).toEqual({
      NPM_TOKEN: 's3cret',
      PIP_INDEX_URL: 'http://x',
    });
  });
  it('a variable that is not set is a usage error naming it', () => {
    let error: unknown;
    try {
      readSetupEnv(['NPM_TOKEN', 'GH_TOKEN'], { NPM_TOKEN: '' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).kind).toBe('usage');
    expect((error as Error).message).toMatch(/^--setup-env GH_TOKEN: not set in gatehouse's environment/);
  });
  it('a name that is not a variable name is a usage error', () => {
    expect(() => readSetupEnv(['NPM_TOKEN=abc'], {})).toThrow(/--setup-env takes a variable name/);
  });
});
