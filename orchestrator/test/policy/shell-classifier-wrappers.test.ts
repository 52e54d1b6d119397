import { describe, expect, it } from 'vitest';
import { shell, useShellClassifier, texts } from './shell-classifier-harness';

useShellClassifier();

describe('wrappers are unwrapped and recorded in via', () => {
  it.each([
    ['bash -c "git push"', ['bash -c']],
    ["sh -c 'git push'", ['sh -c']],
    ["dash -c 'git push'", ['dash -c']],
    ["zsh -c 'git push'", ['zsh -c']],
    ["bash -euxc 'git push'", ['bash -c']],
    ["bash -o pipefail -c 'git push'", ['bash -c']],
    ['bash <<EOF\ngit push\nEOF', ['bash <<EOF']],
    ["bash <<'EOF'\ngit push\nEOF", ['bash <<EOF']],
    ['bash <<< "git push"', ['bash <<<']],
    ['env git push', ['env']],
    ['env -C /tmp A=1 B=2 git push', ['env']],
    ['env -- git push', ['env']],
    ['xargs -0 -n 1 -P4 -I {} git push', ['xargs']],
    ['nice git push', ['nice']],
    ['nice -n 10 git push', ['nice']],
    ['nice -10 git push', ['nice']],
    ['timeout 5 git push', ['timeout']],
    ['timeout -k 2 -s TERM 5m git push', ['timeout']],
    ['timeout --preserve-status 5 git push', ['timeout']],
    ['nohup git push', ['nohup']],
    ['time git push', ['time']],
    ['time -p git push', ['time']],
    ['command git push', ['command']],
    ['exec git push', ['exec']],
    ['exec -a name git push', ['exec']],
    ['stdbuf -oL -e0 git push', ['stdbuf']],
    ['stdbuf --output=L git push', ['stdbuf']],
    ['nohup timeout 5 bash -c "env A=1 git push"', ['nohup', 'timeout', 'bash -c', 'env']],
  ])('%s', (command, via) => {
    const a = shell.classify(command);
    expect(a.followable).toBe(true);
    expect(a.commands.map((c) => [c.text, c.via])).toEqual([['git push', via]]);
  });

  it('find -exec/-execdir/-ok run their command (up to ; or +), find itself is listed too', () => {
    expect(texts(shell.classify(String.raw`find . -name '*.ts' -exec grep -l x {} \; -print`))).toEqual([
      'find . -name *.ts -exec grep -l x {} ; -print',
      'grep -l x {}',
    ]);
    expect(texts(shell.classify(String.raw`find . -exec rm {} + -o -execdir git push \;`))).toEqual([
      'find . -exec rm {} + -o -execdir git push ;',
      'rm {}',
      'git push',
    ]);
    expect(shell.classify("find . -ok rm {} ';'").commands[1]!.via).toEqual(['find -ok']);
    expect(shell.classify('find . -name x').class).toBe('read-only');
    expect(shell.classify('find . -name x -delete').class).toBe('destructive');
  });

  it('xargs appends its input (or substitutes it), which is only known at run time', () => {
    expect(texts(shell.classify('xargs -n1 git push'))).toEqual(['git push ...']);
    expect(shell.classify('xargs -r git push').commands[0]!.via).toEqual(['xargs']);
    for (const command of [
      'echo push | xargs git',
      'xargs -I % git %',
      'xargs -i git {}',
      "xargs -I{} sh -c 'echo {}'",
    ]) {
      expect(shell.classify(command).followable, command).toBe(false);
    }
    expect(shell.classify('xargs -0 rm').class).toBe('destructive');
  });

  it('find -exec substitutes file names for {}: a command or script built from them is not followable', () => {
    expect(shell.classify(String.raw`find . -exec rm {} \;`).followable).toBe(true);
    expect(shell.classify(String.raw`find . -exec git {} \;`).followable).toBe(false);
    expect(shell.classify(String.raw`find . -exec sh -c 'cat {}' \;`).followable).toBe(false);
  });

  it('sudo and doas are privilege themselves and their command is classified too', () => {
    const a = shell.classify('sudo -u root -E A=1 rm -rf /tmp/x');
    expect(a.commands.map((c) => [c.text, c.class, c.via])).toEqual([
      ['sudo -u root -E A=1 rm -rf /tmp/x', 'privilege', []],
      ['rm -rf /tmp/x', 'destructive', ['sudo']],
    ]);
    expect(shell.classify('doas -u web git status').commands.map((c) => c.class)).toEqual(['privilege', 'read-only']);
    expect(shell.classify('sudo -l').commands.map((c) => c.text)).toEqual(['sudo -l']);
  });

  it('a shell running a script file is unknown, but followable', () => {
    const a = shell.classify('bash -x scripts/deploy.sh --prod');
    expect([a.class, a.followable, texts(a)]).toEqual(['unknown', true, ['bash -x scripts/deploy.sh --prod']]);
  });

  it(
    'a shell string or here-document only known at run time is not followable, and the visible text is ' +
      'still checked',
    () => {
      for (const command of [
        'bash -c "$SCRIPT"',
        'sh -c "$(cat x)"',
        'bash <<EOF\n$CMD\nEOF',
        'eval git push',
        'eval "$X"',
      ]) {
        const a = shell.classify(command);
        expect([a.class, a.followable], command).toEqual(['unknown', false]);
        expect(a.problems.length, command).toBeGreaterThan(0);
      }
      expect(texts(shell.classify('bash -c "git push $REMOTE"'))).toContain('git push $REMOTE');
    },
  );

  it('stacks of nested shells are followed, up to a bound', () => {
    let s = 'git push';
    for (let i = 0; i < 3; i++) s = `bash -c ${JSON.stringify(s)}`;
    expect(shell.classify(s).commands.map((c) => c.via.length)).toEqual([3]);
    for (let i = 0; i < 10; i++) s = `bash -c ${JSON.stringify(s)}`;
    expect(shell.classify(s).followable).toBe(false);
  });
});

describe('package runners', () => {
  it('follow a wrapper they launch, and are unknown themselves', () => {
    expect(shell.classify('npx env git push').commands.map((c) => [c.text, c.class, c.via])).toEqual([
      ['npx env git push', 'unknown', []],
      ['git push', 'network', ['npx', 'env']],
    ]);
    for (const command of [
      'npm exec -- timeout 5 git push',
      'npm x nice git push',
      'pnpm exec env git push',
      'pnpm dlx env git push',
      'yarn dlx env git push',
      'bunx nice git push',
      'bun x env git push',
      'npx -c "git push"',
      'pnpm exec -c "git push"',
    ]) {
      const a = shell.classify(command);
      expect([a.class, texts(a).at(-1)], command).toEqual(['unknown', 'git push']);
    }
  });

  it('classify an ordinary tool as that tool, and an unknown one as unknown', () => {
    expect(shell.classify('npx tsc --noEmit').class).toBe('test-build');
    expect(shell.classify('npx some-package').class).toBe('unknown');
  });
});
