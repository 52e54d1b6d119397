import { describe, expect, it } from 'vitest';
import { isCheckCommand, normaliseCommand } from '../../src/loop/check-command';

describe('which commands count as the check', () => {
  const counts: Array<[string, string]> = [
    ['npm test', 'npm test'],
    ['  npm test  ', 'npm test'],
    ['npm   test', 'npm test'],
    ['npm\ttest', 'npm test'],
    ['npm test\n', 'npm test'],
    ['node --test   test/a.test.js', 'node --test test/a.test.js'],
    ['echo "a  b"', 'echo "a  b"'],
    ["grep -r 'x  y' .", "grep -r   'x  y'   ."],
  ];
  it.each(counts)('%j is the check %j', (command, check) => {
    expect(isCheckCommand(command, check)).toBe(true);
  });

  const others: Array<[string, string]> = [
    ['npm test || true', 'npm test'],
    ['npm test; exit 0', 'npm test'],
    ['npm test;exit 0', 'npm test'],
    ['npm test | tail -5', 'npm test'],
    ['npm test && echo ok', 'npm test'],
    ['(npm test)', 'npm test'],
    ['npm test &', 'npm test'],
    ['npm\ntest', 'npm test'],
    ['npm test\nexit 0', 'npm test'],
    ['npm test -- --grep x', 'npm test'],
    ['"npm test"', 'npm test'],
    ['npm  "test"', 'npm test'],
    ['echo "a b"', 'echo "a  b"'],
    ['npm\\ test', 'npm test'],
    ['NPM TEST', 'npm test'],
    ['npm tests', 'npm test'],
    ['npm test\\ ', 'npm test'],
    ['npm test\\  ', 'npm test\\'],
  ];
  it.each(others)('%j is not the check %j', (command, check) => {
    expect(isCheckCommand(command, check)).toBe(false);
  });

  it('only a command line counts', () => {
    expect(isCheckCommand(undefined, 'npm test')).toBe(false);
    expect(isCheckCommand(['npm', 'test'], 'npm test')).toBe(false);
  });

  it('keeps quoted text and escapes verbatim, collapses only unquoted spaces and tabs', () => {
    expect(normaliseCommand(' a  "b  \\" c"   \'d  e\'  f\\  g ')).toBe('a "b  \\" c" \'d  e\' f\\  g');
    expect(normaliseCommand("echo 'a\\'   b")).toBe("echo 'a\\' b");
  });
});
