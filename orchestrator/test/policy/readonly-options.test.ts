import { beforeAll, describe, expect, it } from 'vitest';
import { readOnlyCommands } from '../../src/policy/shell/commands';
import { judgeOptions, spec } from '../../src/policy/shell/options';
import { CUSTOM_JUDGES, FREE, READ_ONLY_SPECS } from '../../src/policy/shell/tables/readonly';
import { loadShellClassifier, type ShellClassifier } from '../../src/policy/shell/index';
import type { Word } from '../../src/policy/shell/words';

const words = (...a: string[]): Word[] => a.map((value) => ({ value, literal: true, pattern: value }));

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});

describe('the read-only allowlist', () => {
  it('lists the options of every command the table calls read-only', () => {
    const missing = readOnlyCommands().filter((n) => !FREE.has(n) && !READ_ONLY_SPECS[n] && !CUSTOM_JUDGES[n]);
    expect(missing).toEqual([]);
  });

  it('decides GNU abbreviations against the whole list, not only the read-only options', () => {
    const s = spec('o:>', 'output=> other-thing compress-program=! compact');
    const judge = (...a: string[]) => judgeOptions('t', s, words(...a));
    expect(judge('--compress-prog=x').class).toBe('unknown');
    expect(judge('--comp', 'x').class).toBe('unknown'); // ambiguous: compress-program, compact
    expect(judge('--compa').class).toBe('read-only');
    expect(judge('--out=f')).toMatchObject({ class: 'write', writes: ['f'] });
    expect(judge('--ou', 'f')).toMatchObject({ class: 'write', writes: ['f'] });
    expect(judge('-of')).toMatchObject({ class: 'write', writes: ['f'] });
    expect(judge('-o', 'f')).toMatchObject({ class: 'write', writes: ['f'] });
    expect(judge('--', '-o', 'f').class).toBe('read-only');
    expect(judge('--nope').class).toBe('unknown');
    expect(judgeOptions('t', spec('o:>', 'output=>', { abbrev: 'exact' }), words('--out=f')).class).toBe('unknown');
  });

  it('reads a cluster up to the letter that takes a value, and options after operands', () => {
    const s = spec('nrS:o:>', '');
    expect(judgeOptions('t', s, words('-nrS1M', 'file')).class).toBe('read-only');
    expect(judgeOptions('t', s, words('-nro', 'out')).writes).toEqual(['out']);
    expect(judgeOptions('t', s, words('-nroout')).writes).toEqual(['out']);
    expect(judgeOptions('t', s, words('file', '-o', 'out')).writes).toEqual(['out']);
  });

  it('takes the next word for a value inside a cluster where the tool does (tree -ao FILE)', () => {
    const s = spec('ao:>', '', { nextWordValues: true });
    expect(judgeOptions('tree', s, words('-oa', 'x')).writes).toEqual(['x']);
  });

  it.each([
    ['sort --compress-prog=sh x', 'unknown'],
    ['sort -S1M --compress-p=sh x', 'unknown'],
    ['sort -rn -k2,2 -t, x', 'read-only'],
    ['uniq -c a b', 'write'],
    ['uniq a', 'read-only'],
    ['xxd -c 16 in out', 'write'],
    ['xxd -ps in', 'read-only'],
    ['date +%F', 'read-only'],
    ['date 0101000020', 'privilege'],
    ['less +!id x', 'unknown'],
    ['less +10 x', 'read-only'],
    ['man -Pcat ls', 'unknown'],
    ['strings @opts', 'unknown'],
    ['bat cache', 'write'],
    ['bat cache --build', 'unknown'],
    ['history -w .bash_history', 'write'],
    ['history 5', 'read-only'],
    ['jobs -x rm x', 'unknown'],
    ['ls --colo=auto -la', 'read-only'],
    ['ls --co', 'unknown'],
    ['grep -3 -rn x', 'read-only'],
    ['head -5 x', 'read-only'],
    ['dmesg --cl', 'privilege'],
    ['file -z x', 'unknown'],
    ['ack foo', 'unknown'],
  ])('%s → %s', (command, cls) => {
    expect(shell.classify(command).commands[0]!.class).toBe(cls);
  });

  it('records output options and operands as writes, so path rules see them', () => {
    expect(shell.classify('sort -o .git/config x').writes).toEqual(['.git/config']);
    expect(shell.classify('uniq in ./.git/config').writes).toEqual(['./.git/config']);
    expect(shell.classify('shuf --out=o -e a').writes).toEqual(['o']);
    expect(shell.classify('tree -ao x').writes).toEqual(['x']);
  });

  it('an argument only known at run time is not read-only where some option is not', () => {
    expect(shell.classify('sort $OPTS f').followable).toBe(true); // OPTS is the fixed environment's (unset)
    expect(shell.classify('o="-o x"; sort $o f').followable).toBe(false);
    expect(shell.classify('uniq "$(cat list)"').commands[0]!.class).toBe('unknown');
    expect(shell.classify('cat $(cat list)').commands[0]!.class).toBe('read-only');
  });
});

describe('git cannot be steered around the wrapper or its overrides', () => {
  it.each([
    '/usr/bin/git status',
    'env -i git status',
    'env -u GIT_CONFIG_COUNT git status',
    'env --unset=GIT_CONFIG_KEY_0 git status',
    'env --ignore-env git status',
    'GIT_CONFIG_COUNT=0 git status',
    'unset GIT_CONFIG_COUNT; git status',
    'unset PATH; git status',
    'git -c core.fsmonitor=x status',
    'git -c filter.x.clean=y status',
  ])('%s is not followable', (command) => {
    expect(shell.classify(command).followable).toBe(false);
  });

  it.each([
    ['git grep --open-files=vim x', 'unknown'],
    ['git archive --outp=x HEAD', 'write'],
    ['git archive --rem=. --exec=sh HEAD', 'network'],
    ['git config --unset-a core.x', 'write'],
    ['git config --ed', 'write'],
    ['git fsck --lost', 'write'],
    ['git log --output=x', 'write'],
    ['git diff-tree --output=x HEAD', 'write'],
    ['git help -w log', 'unknown'],
    ['git grep --recurse-submodules x', 'unknown'],
    ['git -c color.ui=always status', 'read-only'],
    ['git status', 'read-only'],
    ['git log -p', 'read-only'],
  ])('%s → %s', (command, cls) => {
    expect(shell.classify(command).commands[0]!.class).toBe(cls);
  });
});

describe('globs where an option could be', () => {
  it.each([
    ['rg foo *', 'unknown'],
    ['rg foo -- *', 'read-only'],
    ['rg foo src/*', 'read-only'],
    ["sort '*'", 'read-only'],
    ['uniq *.log', 'unknown'],
    ['uniq a*', 'unknown'],
    ['xxd *', 'unknown'],
    ['cat *', 'read-only'],
  ])('%s → %s', (command, cls) => {
    expect(shell.classify(command).commands[0]!.class).toBe(cls);
  });
});

describe('git with a glob where an option could be', () => {
  it.each([
    ['git diff *', 'unknown'],
    ['git diff -- *', 'read-only'],
    ['git log src/*', 'read-only'],
  ])('%s → %s', (command, cls) => {
    expect(shell.classify(command).commands[0]!.class).toBe(cls);
  });
});
