import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRepository } from '../../src/sandbox/copy-list';

/**
 * Red team (issue 12): copy-in runs git on the host over the repository (`git ls-files`). A hostile
 * repository's git config names programs in every place git looks for one; none may run on the host.
 */
describe('copy-in lists a hostile repository without running anything it names (red team)', () => {
  const marks = mkdtempSync(path.join(os.tmpdir(), 'gh-rt12-marks-'));
  const prog = (name: string): string => {
    const file = path.join(marks, `${name}.sh`);
    writeFileSync(file, `#!/bin/sh\ntouch '${path.join(marks, `ran-${name}`)}'\ncat\n`);
    chmodSync(file, 0o755);
    return file;
  };
  const ran = (): string[] => readdirSync(marks).filter((n) => n.startsWith('ran-'));

  function hostileRepo(gitFile: boolean): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt12-repo-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
    git('init', '-q');
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    writeFileSync(path.join(dir, '.gitattributes'), '* filter=evil diff=evil merge=evil\n');
    git('add', '-A');
    git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'one');
    writeFileSync(path.join(dir, 'b.txt'), 'untracked\n');
    writeFileSync(path.join(dir, 'a.txt'), 'modified\n');
    const hooks = path.join(dir, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    for (const h of ['post-index-change', 'pre-commit', 'post-checkout', 'reference-transaction'])
      writeFileSync(path.join(hooks, h), `#!/bin/sh\ntouch '${path.join(marks, `ran-hook-${h}`)}'\n`, { mode: 0o755 });
    writeFileSync(path.join(dir, 'included.cfg'), `[core]\n\tfsmonitor = ${prog('included-fsmonitor')}\n`);
    appendFileSync(
      path.join(dir, '.git', 'config'),
      [
        '[core]',
        `\tfsmonitor = ${prog('fsmonitor')}`,
        `\thooksPath = ${hooks}`,
        `\tpager = ${prog('pager')}`,
        `\tsshCommand = ${prog('ssh')}`,
        `\taskPass = ${prog('askpass')}`,
        '\tuntrackedCache = true',
        `\talternateRefsCommand = ${prog('altrefs')}`,
        `\tworktree = ${marks}`,
        '[filter "evil"]',
        `\tclean = ${prog('clean')}`,
        `\tsmudge = ${prog('smudge')}`,
        `\tprocess = ${prog('process')}`,
        '[diff "evil"]',
        `\ttextconv = ${prog('textconv')}`,
        `\tcommand = ${prog('diffcmd')}`,
        '[diff]',
        `\texternal = ${prog('external')}`,
        '[credential]',
        `\thelper = !${prog('cred')}`,
        '[includeIf "gitdir:/"]',
        `\tpath = ${path.join(dir, 'included.cfg')}`,
        '[include]',
        `\tpath = ${path.join(dir, 'included.cfg')}`,
        '[alias]',
        `\tls-files = !${prog('alias')}`,
        '[extensions]',
        '\tworktreeConfig = true',
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(dir, '.git', 'config.worktree'), `[core]\n\tfsmonitor = ${prog('worktree-fsmonitor')}\n`);
    if (gitFile) {
      // .git as a file pointing at the real git directory elsewhere, as worktrees and submodules have.
      const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'gh-rt12-gitdir-'));
      execFileSync('mv', [path.join(dir, '.git'), path.join(elsewhere, 'real.git')]);
      writeFileSync(path.join(dir, '.git'), `gitdir: ${path.join(elsewhere, 'real.git')}\n`);
    }
    return dir;
  }

  it.each([
    ['a .git folder', false],
    ['a .git file', true],
  ])('with %s', async (_what, gitFile) => {
    const repo = hostileRepo(gitFile);
    const list = await listRepository(repo);
    const paths = list.entries.map((e) => e.rel);
    expect(paths).toEqual(expect.arrayContaining(['a.txt', 'b.txt', '.gitattributes', '.git']));
    // The listing saw the repository (worktree = marks was not followed: the work tree is the repository).
    expect(existsSync(path.join(marks, 'a.txt'))).toBe(false);
    expect(list.notices).toEqual([]); // git listed with the repository's own index and config
    expect(ran()).toEqual([]);
    // Control: the same config does run programs under a plain git, so the check above means something.
    execFileSync('git', ['status', '--short'], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: repo },
      stdio: 'ignore',
    });
    expect(ran().length).toBeGreaterThan(0);
    for (const n of ran()) execFileSync('rm', ['-f', path.join(marks, n)]);
  });
});
