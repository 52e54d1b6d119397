import { rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex as sha256 } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, rootExec, run, sandboxUnderPolicy, sh, startDriver } from '../support/sandbox';

/**
 * Issue 10, deliverable 3: path rules held by the file system, not only by the gate. What the
 * policy denies reading is never copied in, so no command, glob or symlink reaches it; what it
 * denies writing is root's, so the command user can neither write, delete, rename nor replace it.
 */
const POLICY = {
  deny: [
    'read_file(**/.env)',
    'read_file(secrets/**)',
    'write_file(test/**)',
    'edit_file(package.json)',
    'write_file(src/gen/schema.json)',
  ],
};

describe("path rules enforced in the sandbox's file system", () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let repoDir: string;
  beforeAll(async () => {
    repoDir = makeRepo({
      '.env': 'API_TOKEN=top-secret-env\n',
      'config/.env': 'DB_PASSWORD=top-secret-config\n',
      'secrets/key.pem': 'top-secret-key\n',
      'secrets/nested/more.txt': 'top-secret-nested\n',
      'src/a.js': 'export const a = 1;\n',
      'src/gen/schema.json': '{}\n',
      'src/gen/other.json': '{}\n',
      'test/a.test.js': 'test("a", () => {});\n',
      'test/unit/b.test.js': 'test("b", () => {});\n',
      'package.json': '{"name":"fixture"}\n',
    });
    symlinkSync('../.env', path.join(repoDir, 'src', 'envlink'));
    symlinkSync('../secrets', path.join(repoDir, 'src', 'secretsdir'));
    driver = await startDriver();
    sandbox = await sandboxUnderPolicy(driver, repoDir, POLICY, path.join(repoDir, '.gatehouse', 'policy.json'));
  });
  afterAll(async () => {
    await driver?.close();
    rmSync(repoDir, { recursive: true, force: true });
  });

  it('withholds what the policy denies reading, and says what', async () => {
    expect([...(sandbox.info.withheld ?? [])].sort()).toEqual(['.env', 'config/.env', 'secrets']);
    const find = await sh(sandbox, 'find . -path ./.git -prune -o -print | sort');
    expect(find).not.toMatch(/\.env$|secrets\/|key\.pem/m);
    // Every way to read them fails: by name, through a link, by a recursive search, by a glob.
    for (const command of [
      'cat .env',
      'cat config/.env',
      'cat src/envlink',
      'cat src/secretsdir/key.pem',
      'ls secrets',
    ]) {
      const r = await run(sandbox, 'exec', { command });
      expect(r.status, command).toBe('failed');
      expect(r.output, command).toMatch(/No such file or directory/);
    }
    const grep = await run(sandbox, 'exec', { command: 'grep -rI top-secret . ; cat ./*/.env ./.e* 2>&1; true' });
    expect(grep.output).not.toContain('top-secret-');
    expect(grep.output).not.toContain('API_TOKEN=');
  });

  it('withholds git history too when anything is withheld: a fresh one-commit repository stands in', async () => {
    expect(sandbox.info.freshRepository).toBe(true);
    // The fixture committed .env and secrets/: their content is in the host repository's objects.
    const leaks = [
      'git show HEAD:.env',
      'git show HEAD:secrets/key.pem',
      'git log --all -p',
      'git fsck --lost-found; cat .git/lost-found/other/* 2>/dev/null',
      'cat .git/objects/*/* | zlib-flate -uncompress 2>/dev/null',
      'git stash list -p',
    ];
    for (const command of leaks) {
      const r = await run(sandbox, 'exec', { command });
      expect(r.output, command).not.toContain('top-secret');
    }
    expect((await sh(sandbox, 'git log --all --format=%s')).trim()).toBe(
      'workspace as copied by gatehouse (history withheld: the policy denies reading some files)',
    );
    // git works as it would have: clean at the start, a change shows.
    expect(await sh(sandbox, 'git status --porcelain')).toBe('');
    const owner = await rootExec(driver, sandbox, ['stat', '-c', '%u', '.git', '.git/index']);
    expect(owner.output.trim().split('\n')).toEqual(['10001', '10001']);
  });

  it('makes what the policy denies writing unwritable by the command user, in every way', async () => {
    const attempts = [
      'echo x >> test/a.test.js',
      'echo x > test/unit/b.test.js',
      'rm -f test/a.test.js',
      'mv test/a.test.js test/moved.js',
      'touch test/new.test.js',
      'mkdir test/newdir',
      'mv test elsewhere',
      'chmod 777 test',
      'echo x >> package.json',
      'rm -f package.json',
      'mv package.json p.json',
      'ln -sf /etc/passwd package.json',
      'cp /etc/hostname package.json',
      'chmod 666 package.json',
      'echo x > src/gen/schema.json',
      'mv src/gen src/gen2',
      'mv src src2',
      'rm -rf src/gen',
    ];
    for (const command of attempts) {
      const r = await run(sandbox, 'exec', { command });
      expect(r.status, `${command} should fail: ${r.output}`).toBe('failed');
      expect(r.output, command).toMatch(/Permission denied|Operation not permitted|cannot remove|Directory not empty/);
    }
    const owners = await rootExec(driver, sandbox, [
      'stat',
      '-c',
      '%n %u %a',
      'test',
      'test/a.test.js',
      'test/unit',
      'package.json',
      'src/gen',
      'src/gen/schema.json',
      'src',
      '.',
    ]);
    expect(owners.output.trim().split('\n')).toEqual([
      'test 0 755',
      'test/a.test.js 0 644',
      'test/unit 0 755',
      'package.json 0 644',
      'src/gen 0 1777',
      'src/gen/schema.json 0 644',
      'src 0 1777',
      '. 0 1777',
    ]);
    // The daemon's own write primitives run as the command user too: a locked file stays locked
    // even for a call the gate let through (the gate is the second line here, not the only one).
    for (const path of ['package.json', 'test/a.test.js', 'test/new.js']) {
      const w = await run(sandbox, 'write_file', { path, content: 'replaced\n' });
      expect(w.status, path).toBe('failed');
      expect(w.error?.message, path).toMatch(/EACCES|EPERM/);
    }
    const e = await run(sandbox, 'edit_file', {
      path: 'package.json',
      oldText: 'fixture',
      newText: 'x',
      expectedSha256: sha256('{"name":"fixture"}\n'),
    });
    expect(e.status).toBe('failed');
    // Nothing was changed by any of it.
    expect(await sh(sandbox, 'cat package.json test/a.test.js src/gen/schema.json')).toBe(
      '{"name":"fixture"}\ntest("a", () => {});\n{}\n',
    );
  });

  it('leaves everything else as it was: the command user works normally around the locked paths', async () => {
    const ok = [
      'echo y >> src/a.js',
      'echo z > src/gen/other.json && rm src/gen/other.json',
      'touch new-at-root.txt && mv new-at-root.txt renamed.txt && rm renamed.txt',
      'mkdir -p src/gen/sub && echo 1 > src/gen/sub/f && rm -r src/gen/sub',
      'git status --porcelain >/dev/null',
    ];
    for (const command of ok) {
      const r = await run(sandbox, 'exec', { command });
      expect(r.status, `${command}: ${r.output}`).toBe('ok');
    }
    // Files the daemon writes for the model belong to the command user, as if it had written them.
    const w = await run(sandbox, 'write_file', { path: 'src/new/deep/file.js', content: 'x\n' });
    expect(w.status).toBe('ok');
    const st = await rootExec(driver, sandbox, [
      'stat',
      '-c',
      '%n %u',
      'src/new',
      'src/new/deep',
      'src/new/deep/file.js',
      'src/a.js',
    ]);
    expect(st.output.trim().split('\n')).toEqual([
      'src/new 10001',
      'src/new/deep 10001',
      'src/new/deep/file.js 10001',
      'src/a.js 10001',
    ]);
  });
});
