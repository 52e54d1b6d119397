import { beforeAll, describe, expect, it } from 'vitest';
import { loadShellClassifier, type ShellClassifier } from '../../src/policy/shell/index';

/**
 * The tables are JavaScript objects, and every object inherits `constructor`, `toString`,
 * `__proto__`…: a command word with such a name must not find what the object inherits.
 * `python -m constructor` runs ./constructor.py, project code; it was called read-only because
 * the module table "had" a constructor.
 */

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});

describe('a word that names an inherited property of a table is not in the table', () => {
  it.each([
    ['python -m constructor', 'unknown'],
    ['python3 -m toString', 'unknown'],
    ['cargo constructor', 'unknown'],
    ['uv valueOf', 'unknown'],
    ['go __proto__', 'unknown'],
    ['dotnet hasOwnProperty', 'unknown'],
    ['playwright toString', 'unknown'],
    ['apt constructor', 'network'],
    ['systemctl toString', 'privilege'],
    ['npm constructor', 'unknown'],
    ['git constructor push', 'unknown'],
  ])('%s is %s', (command, cls) => {
    expect(shell.classify(command).class).toBe(cls);
  });

  it('a command named like one is an unknown command, not a wrapper', () => {
    const a = shell.classify('toString rm -rf x');
    expect(a.commands.map((c) => c.text)).toEqual(['toString rm -rf x']);
    expect(a.class).toBe('unknown');
  });
});
