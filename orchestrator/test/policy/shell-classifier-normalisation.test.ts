import { describe, expect, it } from 'vitest';
import { shell, useShellClassifier, texts, one } from './shell-classifier-harness';

useShellClassifier();

describe('normalisation', () => {
  it.each([
    ['/usr/bin/git push', 'git push'],
    ['/usr/local/bin/git push', 'git push'],
    [String.raw`\git push`, 'git push'],
    ["'git' push", 'git push'],
    ['"git" push', 'git push'],
    ['g\'i\'t p"us"h', 'git push'],
    [String.raw`$'\x67\151t' push`, 'git push'],
    ['git -C . push', 'git push'],
    ['git -C /tmp/repo -c color.ui=always --no-pager push -f', 'git push -f'],
    ['git --git-dir=.git --work-tree . push', 'git push'],
    ['git --namespace x -P log', 'git log'],
    ['npm --prefix x test', 'npm test'],
    ['npm --silent --workspace=orchestrator run build', 'npm run build'],
    ['git >/dev/null push', 'git push'],
    ['git pu\\\nsh', 'git push'],
    ['gi\\\nt push', 'git push'],
    ['>/dev/null git push', 'git push'],
    ['echo a{b,c}', 'echo ab ac'],
    ['echo x{1..3}', 'echo x1 x2 x3'],
  ])('%s → %s', (command, text) => {
    expect(one(command).text).toBe(text);
  });

  it('keeps expansions as written and does not treat them as literal', () => {
    expect(one('cat "$HOME/x" ${Y:-z}').argv).toEqual(['cat', '$HOME/x', '${Y:-z}']);
  });

  it('rejects command names only known at run time', () => {
    for (const command of [
      '$CMD push',
      '"$CMD" push',
      '$(echo rm) -rf x',
      '`which git` push',
      '${G} push',
      '/usr/bin/gi? push',
      'git$X push',
    ]) {
      const a = shell.classify(command);
      expect([a.class, a.followable], command).toEqual(['unknown', false]);
    }
  });

  it('treats source, ., eval and alias as not followable', () => {
    for (const command of ['source env.sh', '. env.sh', 'eval ls', "alias ll='ls -l'"])
      expect(shell.classify(command).followable, command).toBe(false);
  });

  it('does not trust a name that is not the system program', () => {
    for (const command of [
      './git status',
      '~/bin/git status',
      'PATH=. git status',
      'LD_PRELOAD=x.so git status',
      'git -c core.pager=x status',
    ]) {
      const a = shell.classify(command);
      expect([a.class, a.followable], command).toEqual(['unknown', false]);
    }
    expect(shell.classify('./gradlew build').class).toBe('test-build');
  });

  it("runs a package's program as project code, named by its path", () => {
    for (const command of [
      'node_modules/.bin/git status',
      './node_modules/.bin/git status',
      '/tmp/node_modules/.bin/git status',
    ]) {
      const a = shell.classify(command);
      expect([a.class, a.followable, texts(a)], command).toEqual(['test-build', true, [command]]);
    }
    expect(shell.classify('node_modules/.bin/../../bin/git status').followable).toBe(false);
  });

  it('classifies a call to a function by its name, wherever and whenever the function is defined', () => {
    for (const command of [
      'rm() { :; }; rm -rf x',
      'rm -rf x; rm() { :; }',
      "bash -c 'rm() { :; }'; rm -rf x",
      'rm() { :; }; command rm -rf x',
    ]) {
      expect(shell.classify(command).class, command).toBe('destructive');
    }
    expect(shell.classify('f() { ls; }; f').class).toBe('unknown');
  });
});
