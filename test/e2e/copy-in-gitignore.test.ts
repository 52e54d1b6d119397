import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sandboxUnderPolicy, sh, startDriver } from '../support/sandbox';

/**
 * What copy-in puts in /workspace (copy-in.ts, copy-list.ts), read back inside a real sandbox:
 * .gitignore honoured (nested, negated, .git/info/exclude), tracked files kept even when ignored,
 * copy.include / copy.exclude, symbolic links leading outside skipped with a notice while links
 * inside are kept, a plain folder, and the policy's withheld paths still withheld.
 */
describe('copy-in honours .gitignore and never follows links out', () => {
  let driver: SandboxDriver;
  const dirs: string[] = [];
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => {
    await driver?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  function write(root: string, files: Record<string, string>): void {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), content);
    }
  }

  async function sandboxFor(repoDir: string, copy?: { exclude?: string[]; include?: string[] }): Promise<Sandbox> {
    dirs.push(repoDir);
    return driver.createSandbox({ runId: newId('run'), repoDir, ...(copy ? { copy } : {}) });
  }

  /** Every path in the workspace but .git's, sorted. */
  async function listed(sandbox: Sandbox): Promise<string[]> {
    const out = await sh(sandbox, "find . -path ./.git -prune -o ! -name . -print | sed 's#^\\./##' | sort");
    return out.split('\n').filter((l) => l !== '');
  }

  it('leaves out what .gitignore files, negations and info/exclude ignore, keeps tracked files', async () => {
    const repoDir = makeRepo({
      '.gitignore': 'node_modules/\ndist/\n*.log\n!keep.log\n',
      'src/a.js': 'a\n',
      'src/.gitignore': 'generated/\n',
    });
    // Tracked although a rule matches it: git copies it, so does copy-in.
    writeFileSync(path.join(repoDir, 'tracked.log'), 'tracked before the rule\n');
    execFileSync('git', ['add', '-f', 'tracked.log'], { cwd: repoDir });
    write(repoDir, {
      'node_modules/left-pad/index.js': 'module.exports = 1;\n',
      'dist/bundle.js': 'built\n',
      'debug.log': 'noise\n',
      'keep.log': 'kept by negation\n',
      'src/generated/x.js': 'generated\n',
      'src/new.js': 'untracked, not ignored\n',
      'local-only.txt': 'excluded by info/exclude\n',
    });
    writeFileSync(path.join(repoDir, '.git', 'info', 'exclude'), 'local-only.txt\n');
    const sandbox = await sandboxFor(repoDir);
    expect(await listed(sandbox)).toEqual([
      '.gitignore',
      'keep.log',
      'src',
      'src/.gitignore',
      'src/a.js',
      'src/new.js',
      'tracked.log',
    ]);
    expect((await sh(sandbox, 'git log --format=%s')).trim()).toBe('fixture');
    expect(sandbox.info.copySkipped).toEqual(
      expect.arrayContaining([
        { path: 'node_modules', reason: 'ignored (.gitignore)' },
        { path: 'dist', reason: 'ignored (.gitignore)' },
        { path: 'src/generated', reason: 'ignored (.gitignore)' },
      ]),
    );
    // Aggregated: node_modules once, not its files.
    expect(sandbox.info.copySkipped!.some((s) => s.path.startsWith('node_modules/'))).toBe(false);
    expect((await sh(sandbox, 'stat -c %U src/new.js')).trim()).toBe('sandbox');
  });

  it('copies ignored paths that copy.include names, and never what copy.exclude names', async () => {
    const repoDir = makeRepo({ '.gitignore': 'node_modules/\n*.env\n', 'src/a.js': 'a\n', 'docs/big.bin': 'x\n' });
    write(repoDir, {
      'node_modules/tool/bin.js': 'tool\n',
      'node_modules/other/index.js': 'other\n',
      'config.env': 'X=1\n',
    });
    const sandbox = await sandboxFor(repoDir, {
      include: ['node_modules/tool/**', 'config.env'],
      exclude: ['docs', 'config.env'],
    });
    expect(await listed(sandbox)).toEqual([
      '.gitignore',
      'node_modules',
      'node_modules/tool',
      'node_modules/tool/bin.js',
      'src',
      'src/a.js',
    ]);
    expect(sandbox.info.copySkipped).toEqual(
      expect.arrayContaining([
        { path: 'docs', reason: 'copy.exclude' },
        { path: 'config.env', reason: 'copy.exclude' },
      ]),
    );
  });

  it('skips a node_modules link leading outside with a notice, keeps links inside, and the sandbox works', async () => {
    const outer = mkdtempSync(path.join(os.tmpdir(), 'gh-mono-'));
    dirs.push(outer);
    write(outer, { 'node_modules/dep/index.js': 'module.exports = 42;\n' });
    const repoDir = path.join(outer, 'packages', 'app');
    write(repoDir, { 'index.js': "console.log('app')\n", 'lib/real.js': 'real\n' });
    execFileSync('git', ['init', '-q'], { cwd: repoDir });
    symlinkSync('../../node_modules', path.join(repoDir, 'node_modules'));
    symlinkSync('lib/real.js', path.join(repoDir, 'inside-link.js'));
    symlinkSync('/etc/passwd', path.join(repoDir, 'absolute-link'));
    // Each link looks harmless alone; together they climb out (deep/a/b -> ../.. is the repository root).
    write(repoDir, { 'deep/a/placeholder': '' });
    symlinkSync('../..', path.join(repoDir, 'deep', 'a', 'b'));
    symlinkSync('deep/a/b/..', path.join(repoDir, 'chain-link'));
    const sandbox = await sandboxFor(repoDir);
    const files = await listed(sandbox);
    expect(files).toContain('inside-link.js');
    expect(files).toContain('deep/a/b');
    expect(files).not.toContain('node_modules');
    expect(files).not.toContain('absolute-link');
    expect(files).not.toContain('chain-link');
    expect((await sh(sandbox, 'readlink inside-link.js; cat inside-link.js')).trim()).toBe('lib/real.js\nreal');
    expect(sandbox.info.copyNotices).toEqual(
      expect.arrayContaining([
        'node_modules -> ../../node_modules points outside the repository; not copied',
        'absolute-link -> /etc/passwd points outside the repository; not copied',
        'chain-link -> deep/a/b/.. points outside the repository; not copied',
      ]),
    );
    const r = await run(sandbox, 'exec', { command: 'node index.js' });
    expect(r.output.trim()).toBe('app');
  });

  it('copies a folder that is not a repository, honouring its .gitignore', async () => {
    const repoDir = mkdtempSync(path.join(os.tmpdir(), 'gh-plain-'));
    write(repoDir, {
      '.gitignore': 'build/\n',
      'main.py': 'print(1)\n',
      'build/out.o': 'obj\n',
      'pkg/.gitignore': '*.pyc\n!keep.pyc\n',
      'pkg/m.pyc': 'x',
      'pkg/keep.pyc': 'y',
      'empty/.keep': '',
    });
    const sandbox = await sandboxFor(repoDir);
    expect(await listed(sandbox)).toEqual([
      '.gitignore',
      'empty',
      'empty/.keep',
      'main.py',
      'pkg',
      'pkg/.gitignore',
      'pkg/keep.pyc',
    ]);
  });

  it('still withholds what the policy denies reading, ignored or not, and locks write-denied paths', async () => {
    const repoDir = makeRepo({
      '.gitignore': 'node_modules/\n.env\n',
      'src/a.js': 'a\n',
      'secrets/key.pem': 'PRIVATE\n',
      'ci/deploy.sh': 'deploy\n',
    });
    write(repoDir, { '.env': 'TOKEN=top-secret\n', 'node_modules/x/index.js': 'x\n' });
    dirs.push(repoDir);
    const sandbox = await sandboxUnderPolicy(driver, repoDir, {
      deny: ['read_file(**/.env)', 'read_file(secrets/**)', 'write_file(ci/**)'],
    });
    expect(sandbox.info.withheld).toEqual(['secrets']);
    // The work tree holds a withheld file (.env, ignored or not): its content could be anywhere in git.
    expect(sandbox.info.freshRepository).toBe(true);
    const files = await listed(sandbox);
    expect(files).not.toContain('.env');
    expect(files).not.toContain('secrets');
    expect(files).not.toContain('node_modules');
    expect((await sh(sandbox, 'stat -c %U ci/deploy.sh')).trim()).toBe('root');
    expect((await sh(sandbox, 'grep -r top-secret . 2>/dev/null; true')).trim()).toBe('');
  });
});
