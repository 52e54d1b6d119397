import { describe, expect, it } from 'vitest';
import { loadShellClassifier, MAX_SOURCE_LENGTH } from '../../src/policy/shell/index';
import { shell, useShellClassifier } from './shell-classifier-harness';

useShellClassifier();

describe('bounds', () => {
  it('loads once and classifies synchronously', async () => {
    expect(await loadShellClassifier()).toBe(shell);
    expect(shell.classify('ls')).not.toBeInstanceOf(Promise);
  });

  it('answers a 1 MB line at once, without parsing it', () => {
    const t = performance.now();
    const a = shell.classify(`echo ${'a'.repeat(1 << 20)}`);
    expect(performance.now() - t).toBeLessThan(1000);
    expect([a.class, a.followable, a.commands]).toEqual(['unknown', false, []]);
    expect(a.problems[0]).toContain(String(MAX_SOURCE_LENGTH));
  });

  it.each([
    ['a long list of commands', 'echo a; '.repeat(MAX_SOURCE_LENGTH / 8 - 1)],
    ['deeply nested substitutions', `echo ${'$('.repeat(3000)}x${')'.repeat(3000)}`],
    ['deeply nested subshells', `${'('.repeat(20000)}ls${')'.repeat(20000)}`],
    ['a long && chain', `${'true && '.repeat(5000)}ls`],
    ['unbalanced quotes', '"'.repeat(100_000)],
    ['a huge brace expansion', `echo ${'{a,b}'.repeat(40)}`],
    ['many brace expansions', `echo ${'{a,b}{c,d}{e,f}{g,h} '.repeat(2000)}`],
  ])('terminates with a bounded result on %s', (_, command) => {
    const t = performance.now();
    const a = shell.classify(command);
    expect(performance.now() - t).toBeLessThan(5000);
    expect(a.commands.length).toBeLessThanOrEqual(10_000);
    expect(a.followable).toBe(false);
    expect(a.class).toBe('unknown');
    for (const p of a.problems) expect(p.length).toBeLessThan(200);
  });
});
