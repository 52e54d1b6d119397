import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyChangeSet, verifyChangeSet } from '../../src/loop/change-set';
import { compilePolicy, createPolicy, loadShellClassifier } from '../../src/policy/index';
import type { WorkspaceManifest } from '../../src/sandbox/workspace-save';

/**
 * The host-side verifier fed a forged change list, as a lying daemon or lister would produce it:
 * paths that did not change, .git paths, escapes, links, odd modes. Only what passes every check
 * is written, and one refusal means nothing is.
 */
const classifier = await loadShellClassifier();
const policy = createPolicy(
  compilePolicy({ deny: ['write_file(secret/**)'], ask: ['edit_file(docs/**)'] }, 'test.json', classifier),
  'confirm-novel',
  classifier,
);

function setup(): { repo: string; runDir: string; blob: (content: string) => { sha256: string; size: number } } {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-cs-repo-'));
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-cs-run-'));
  mkdirSync(path.join(runDir, 'workspace/blobs'), { recursive: true });
  writeFileSync(path.join(repo, 'same.txt'), 'same\n');
  writeFileSync(path.join(repo, 'old.txt'), 'old\n');
  mkdirSync(path.join(repo, '.git'));
  writeFileSync(path.join(repo, '.git/config'), '[core]\n');
  symlinkSync('same.txt', path.join(repo, 'link'));
  const outside = mkdtempSync(path.join(os.tmpdir(), 'gh-cs-out-'));
  symlinkSync(outside, path.join(repo, 'outdir'));
  return {
    repo,
    runDir,
    blob(content) {
      const sha256 = createHash('sha256').update(content).digest('hex');
      writeFileSync(path.join(runDir, 'workspace/blobs', sha256), content);
      return { sha256, size: Buffer.byteLength(content) };
    },
  };
}

const file = (p: string, b: { sha256: string; size: number }, mode = 0o644) => ({
  path: p,
  kind: 'file' as const,
  ...b,
  mode,
  uid: 10001,
});

describe('verifyChangeSet (forged lists)', () => {
  it('refuses every path that is not plainly inside the repository or names git / gatehouse state', async () => {
    const { repo, runDir, blob } = setup();
    const x = blob('x\n');
    const forged = [
      '.git/config',
      'sub/.git/hooks/pre-commit',
      '.GIT/config',
      '.gatehouse/policy.json',
      '.Gatehouse/policy.json',
      '../escape',
      '/etc/passwd',
      'a/../b',
      './c',
      'd//e',
      'runs/r/events.jsonl',
    ];
    const m: WorkspaceManifest = {
      v: 1,
      files: forged.map((p) => file(p, x)),
      deleted: ['.gatehouse/policy.json'],
      skipped: [],
    };
    const set = await verifyChangeSet(repo, runDir, m, { policy, protect: ['runs'] });
    expect(set.refused.map((r) => r.path).sort()).toEqual([...forged, '.gatehouse/policy.json'].sort());
    expect(set.writes).toEqual([]);
    await expect(applyChangeSet(repo, set)).rejects.toThrow(/refused/);
    expect(readFileSync(path.join(repo, '.git/config'), 'utf8')).toBe('[core]\n');
  });

  it('drops paths listed as changed that are not (identical content, already absent)', async () => {
    const { repo, runDir, blob } = setup();
    const m: WorkspaceManifest = {
      v: 1,
      files: [file('same.txt', blob('same\n'))],
      deleted: ['never-existed.txt'],
      skipped: [],
    };
    const set = await verifyChangeSet(repo, runDir, m, { policy });
    expect(set).toMatchObject({ writes: [], deletes: [], refused: [], unchanged: ['never-existed.txt', 'same.txt'] });
  });

  it(
    'refuses links made, links retargeted, host links deleted, ' +
      'writes through host links, special modes; policy decides on the final path',
    async () => {
      const { repo, runDir, blob } = setup();
      const x = blob('x\n');
      const m: WorkspaceManifest = {
        v: 1,
        files: [
          { path: 'new-link', kind: 'symlink', target: '/etc/passwd', uid: 10001 },
          { path: 'link', kind: 'symlink', target: '/etc/shadow', uid: 10001 },
          file('outdir/evil', x),
          file('setuid.sh', x, 0o4755),
          file('secret/key', x),
          file('docs/guide.md', x),
        ],
        deleted: ['link'],
        skipped: [],
      };
      const set = await verifyChangeSet(repo, runDir, m, { policy });
      const reasons = Object.fromEntries(set.refused.map((r) => [r.path, r.reason]));
      expect(Object.keys(reasons).sort()).toEqual([
        'docs/guide.md',
        'link',
        'new-link',
        'outdir/evil',
        'secret/key',
        'setuid.sh',
      ]);
      expect(reasons['new-link']).toMatch(/symbolic link/);
      expect(reasons['outdir/evil']).toMatch(/outdir is a symbolic link/);
      expect(reasons['setuid.sh']).toMatch(/setuid/);
      expect(reasons['secret/key']).toMatch(/denied by the policy \(deny\[0\]/);
      expect(reasons['docs/guide.md']).toMatch(/asks before writing/);
      expect(set.refused.filter((r) => r.path === 'link')).toHaveLength(2);
      expect(readlinkSync(path.join(repo, 'link'))).toBe('same.txt');
    },
  );

  it('applies a clean set atomically with modes normalised to 0644/0755, deletions included', async () => {
    const { repo, runDir, blob } = setup();
    const m: WorkspaceManifest = {
      v: 1,
      files: [file('bin/run.sh', blob('#!/bin/sh\n'), 0o775), file('same.txt', blob('changed\n'), 0o600)],
      deleted: ['old.txt'],
      skipped: [],
    };
    const set = await verifyChangeSet(repo, runDir, m, { policy });
    expect(set.refused).toEqual([]);
    await applyChangeSet(repo, set);
    expect(lstatSync(path.join(repo, 'bin/run.sh')).mode & 0o7777).toBe(0o755);
    expect(lstatSync(path.join(repo, 'same.txt')).mode & 0o7777).toBe(0o644);
    expect(readFileSync(path.join(repo, 'same.txt'), 'utf8')).toBe('changed\n');
    expect(existsSync(path.join(repo, 'old.txt'))).toBe(false);
  });

  it('a failure part way says what was and was not written', async () => {
    const { repo, runDir, blob } = setup();
    mkdirSync(path.join(repo, 'locked'));
    const m: WorkspaceManifest = {
      v: 1,
      files: [file('a.txt', blob('a\n')), file('locked/b.txt', blob('b\n')), file('z.txt', blob('z\n'))],
      deleted: [],
      skipped: [],
    };
    const set = await verifyChangeSet(repo, runDir, m, { policy });
    // The host changes after verification: the folder becomes a link.
    const target = mkdtempSync(path.join(os.tmpdir(), 'gh-cs-t-'));
    rmSync(path.join(repo, 'locked'), { recursive: true });
    symlinkSync(target, path.join(repo, 'locked'));
    await expect(applyChangeSet(repo, set)).rejects.toThrow(
      /stopped at locked\/b\.txt: locked is a symbolic link.*Written: a\.txt; not written: locked\/b\.txt, z\.txt/s,
    );
    expect(existsSync(path.join(target, 'b.txt'))).toBe(false);
  });
});
