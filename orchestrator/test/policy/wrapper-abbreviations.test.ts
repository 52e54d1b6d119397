import { beforeAll, describe, expect, it } from 'vitest';
import { loadShellClassifier, type ShellClassifier } from '../../src/policy/shell/index';

/**
 * Wrappers parsed by GNU getopt_long (nice, stdbuf, timeout, ionice, watch, sudo, like env, xargs
 * and time before them) take any unambiguous abbreviation of a long option, and an abbreviated
 * option that takes a value takes the next word: the command they run starts after it.
 */

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});
const texts = (command: string) => shell.classify(command).commands.map((c) => c.text);

describe('an abbreviated long option of a wrapper is read as the option it stands for', () => {
  it.each([
    ['nice --adj 5 rm -rf x', 'rm -rf x'],
    ['stdbuf --out L git push', 'git push'],
    ['timeout --sig KILL 5 git push', 'git push'],
    ['timeout --kill 1 5 git push', 'git push'],
    ['ionice --classd 3 rm -rf x', 'rm -rf x'],
    ['watch --int 1 -x git push', 'git push'],
    ['sudo --us root rm -rf x', 'rm -rf x'],
    ['sudo --chd /tmp git push', 'git push'],
  ])('%s runs %s', (command, inner) => {
    expect(texts(command)).toContain(inner);
  });

  it('watch --ex runs its command as words, like --exec', () => {
    expect(shell.classify("watch --ex 'rm -rf x'").commands.map((c) => c.argv)).toContainEqual(['rm -rf x']);
  });

  it('sudo --log is --login: a shell reading standard input, which cannot be followed', () => {
    const a = shell.classify('sudo --log');
    expect(a.followable).toBe(false);
    expect(a.problems.join()).toMatch(/reads its script from standard input/);
  });

  it('an abbreviation of two options is an error, not a guess', () => {
    // --p is --pid or --pgid: ionice refuses it, so nothing is taken as its value.
    expect(texts('ionice --p 5 git status')).toContain('5 git status');
  });
});

describe('short options of a wrapper are read as the tool reads them', () => {
  it.each([
    ['ionice -t rm ls', 'rm ls'],
    ['ionice -t sh echo', 'sh echo'],
    ['ionice -tc3 git push', 'git push'],
  ])('%s runs %s', (command, inner) => {
    expect(texts(command)).toContain(inner);
  });
  it('ionice -t rm ls is destructive, not read-only', () => {
    expect(shell.classify('ionice -t rm ls').class).toBe('destructive');
  });
});
