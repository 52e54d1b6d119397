import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseRemote, repositoryIdentity } from '../../src/memory/repository-identity';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@gatehouse', '-c', 'user.name=t', ...args], { cwd, stdio: 'pipe' });

function repo(content: string, remote?: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'gh-ident-'));
  writeFileSync(path.join(d, 'a.txt'), content);
  git(d, 'init', '-q');
  git(d, 'add', '-A');
  git(d, 'commit', '-qm', 'root');
  if (remote) git(d, 'remote', 'add', 'origin', remote);
  return d;
}

describe('repository identity: what a repository record is bound to', () => {
  it('one identity in every clone; a fork, an unrelated history or a plain copy is another', async () => {
    const a = repo('a\n', 'https://github.com/acme/app.git');
    const clone = mkdtempSync(path.join(os.tmpdir(), 'gh-ident-clone-'));
    const fork = mkdtempSync(path.join(os.tmpdir(), 'gh-ident-fork-'));
    const copy = mkdtempSync(path.join(os.tmpdir(), 'gh-ident-copy-'));
    try {
      git(clone, 'clone', '-q', a, '.');
      git(clone, 'remote', 'set-url', 'origin', 'git@github.com:acme/app.git');
      git(clone, 'commit', '-q', '--allow-empty', '-m', 'later work');
      git(fork, 'clone', '-q', a, '.');
      git(fork, 'remote', 'set-url', 'origin', 'https://github.com/mallory/app.git');
      const unrelated = repo('b\n', 'https://github.com/acme/app.git');
      cpSync(path.join(a, 'a.txt'), path.join(copy, 'a.txt'));

      const id = async (d: string) => (await repositoryIdentity(d)).id;
      const ia = await id(a);
      expect(ia).toMatch(/^git-[0-9a-f]{24}$/);
      expect(await id(clone)).toBe(ia);
      expect(await id(fork)).not.toBe(ia);
      expect(await id(unrelated)).not.toBe(ia);
      const ic = await id(copy);
      expect(ic).toMatch(/^path-[0-9a-f]{24}$/);
      expect(ic).not.toBe(ia);
      rmSync(unrelated, { recursive: true, force: true });
    } finally {
      for (const d of [a, clone, fork, copy]) rmSync(d, { recursive: true, force: true });
    }
  });

  it('normalises remotes to host/path, without credentials', () => {
    for (const url of [
      'https://github.com/acme/app.git',
      'https://user:ghp_secret@GitHub.com/acme/app/',
      'git@github.com:acme/app.git',
      'ssh://git@github.com:22/acme/app',
    ])
      expect(normaliseRemote(url), url).toBe('github.com/acme/app');
    expect(normaliseRemote('/srv/git/app.git')).toBe('/srv/git/app');
    expect(normaliseRemote('')).toBe('');
  });

  /**
   * Issue 17: git follows a `.git` FILE (`gitdir: PATH`) anywhere, so a hostile repository could
   * borrow another's git directory, take its identity and read its memories.
   */
  describe("a .git that is not the repository's own", () => {
    const id = async (d: string) => (await repositoryIdentity(d)).id;
    const hostile = (): string => mkdtempSync(path.join(os.tmpdir(), 'gh-ident-hostile-'));

    it("a real worktree of the repository (git worktree add) shares the repository's identity", async () => {
      const a = repo('a\n', 'https://github.com/acme/app.git');
      const wt = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-ident-wt-')), 'wt');
      git(a, 'worktree', 'add', '-q', wt);
      expect(readFileSync(path.join(wt, '.git'), 'utf8')).toMatch(/^gitdir: /);
      expect(await id(wt)).toBe(await id(a));
    });

    it("a .git file naming another repository's git directory, or one of its worktrees, is not followed", async () => {
      const victim = repo('private\n', 'https://github.com/acme/private.git');
      const victimId = await id(victim);
      const thief = hostile();
      writeFileSync(path.join(thief, '.git'), `gitdir: ${path.join(victim, '.git')}\n`);
      // git itself would follow it: the theft is real without the check.
      expect(execFileSync('git', ['rev-list', '--max-parents=0', 'HEAD'], { cwd: thief, encoding: 'utf8' })).not.toBe(
        '',
      );
      const stolen = await repositoryIdentity(thief);
      expect(stolen.id).not.toBe(victimId);
      expect(stolen).toMatchObject({ kind: 'path', describe: realpathSync(thief) });
      // The victim's own worktree metadata: its back-pointer names the victim's worktree, not the thief.
      const wt = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-ident-wt-')), 'wt');
      git(victim, 'worktree', 'add', '-q', wt);
      const meta = readFileSync(path.join(wt, '.git'), 'utf8')
        .replace(/^gitdir: /, '')
        .trim();
      const thief2 = hostile();
      writeFileSync(path.join(thief2, '.git'), `gitdir: ${meta}\n`);
      expect((await repositoryIdentity(thief2)).kind).toBe('path');
    });

    it('a .git link, a .git folder with a commondir, or a .git FIFO is not followed either', async () => {
      const victim = repo('private\n', 'https://github.com/acme/private.git');
      const victimId = await id(victim);
      const linked = hostile();
      symlinkSync(path.join(victim, '.git'), path.join(linked, '.git'));
      expect((await repositoryIdentity(linked)).kind).toBe('path');
      const common = hostile();
      mkdirSync(path.join(common, '.git'));
      writeFileSync(path.join(common, '.git', 'commondir'), `${path.join(victim, '.git')}\n`);
      writeFileSync(path.join(common, '.git', 'HEAD'), 'ref: refs/heads/master\n');
      expect(await id(common)).not.toBe(victimId);
      const fifo = hostile();
      execFileSync('mkfifo', [path.join(fifo, '.git')]);
      const started = Date.now();
      expect((await repositoryIdentity(fifo)).kind).toBe('path');
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });
});
