import { beforeAll, describe, expect, it } from 'vitest';
import { loadShellClassifier, type ShellClassifier } from '../../src/policy/shell/index';
import { BUILD_EXAMPLES } from '../../src/policy/shell/tables/build-tools';
import { COREUTILS_EXAMPLES } from '../../src/policy/shell/tables/coreutils';
import { classTable, type Example } from '../../src/policy/shell/tables/family';
import { GIT_EXAMPLES } from '../../src/policy/shell/tables/git';
import { INTERPRETER_EXAMPLES } from '../../src/policy/shell/tables/interpreters';
import { PACKAGE_MANAGER_EXAMPLES } from '../../src/policy/shell/tables/package-managers';
import { SYSTEM_EXAMPLES } from '../../src/policy/shell/tables/system-tools';
import { WRAPPER_EXAMPLES } from '../../src/policy/shell/tables/wrappers';

/**
 * Every family of the classifier's tables carries examples of what it means (as Codex's
 * execpolicy rules carry `match` and `not_match` examples, checked when the policy loads): each
 * must get its class, so a table edit that changes what an example gets fails here.
 */

const FAMILIES: Record<string, Example[]> = {
  git: GIT_EXAMPLES,
  'package managers': PACKAGE_MANAGER_EXAMPLES,
  interpreters: INTERPRETER_EXAMPLES,
  'build tools': BUILD_EXAMPLES,
  'system tools': SYSTEM_EXAMPLES,
  coreutils: COREUTILS_EXAMPLES,
  wrappers: WRAPPER_EXAMPLES,
};

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});

describe.each(Object.entries(FAMILIES))('the %s table', (_, examples) => {
  it('has examples of more than one class', () => {
    expect(new Set(examples.map(([, cls]) => cls)).size).toBeGreaterThan(1);
  });
  it.each(examples.map(([command, cls]) => ({ command, cls })))('$command is $cls', ({ command, cls }) => {
    expect(shell.classify(command).class).toBe(cls);
  });
});

describe('class tables', () => {
  it('refuse a name listed under two classes', () => {
    expect(() => classTable({ 'read-only': 'ls cat' }, { write: 'cat' })).toThrow(/cat is listed as both/);
  });
  it('accept a name listed twice under the same class', () => {
    expect(classTable({ 'read-only': 'ls printenv printenv' })).toEqual({ ls: 'read-only', printenv: 'read-only' });
  });
});
