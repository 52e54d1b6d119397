import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/config/load';
import { lockfileHashes } from '../../src/environment/lockfiles';
import { resolveRunPolicy } from '../../src/policy/index';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');

/**
 * Issue 17: a hostile repository puts a FIFO, socket or huge file where gatehouse reads its
 * `.gatehouse` files (or a lockfile for the setup cache). Each is refused with a message naming the
 * file and what it is, and nothing waits on a writer that never comes.
 */
describe("a repository's files that are not small regular files", () => {
  const closers: (() => void)[] = [];
  afterEach(() => closers.splice(0).forEach((c) => c()));

  function repo(): string {
    const d = mkdtempSync(path.join(os.tmpdir(), 'gh-special-'));
    mkdirSync(path.join(d, '.gatehouse'));
    return d;
  }
  function fifoAt(file: string): void {
    execFileSync('mkfifo', [file]);
    // A reader that blocks is released after a while (bounded), so a regression fails instead of hanging.
    spawn('timeout', ['8', 'sh', '-c', `sleep 3; exec 3>'${file}'`], { stdio: 'ignore' }).unref();
  }
  async function socketAt(file: string): Promise<void> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(file, resolve));
    closers.push(() => server.close());
  }
  async function quickly<T>(f: () => T | Promise<T>): Promise<T> {
    const started = Date.now();
    const out = await f();
    expect(Date.now() - started).toBeLessThan(2000);
    return out;
  }

  it('a FIFO at .gatehouse/config.json fails the config load at once, naming it', async () => {
    const d = repo();
    fifoAt(path.join(d, '.gatehouse', 'config.json'));
    await quickly(() =>
      expect(() => loadProjectConfig({ repoDir: d })).toThrow(
        /config\.json: cannot read the config file: it is a named pipe \(FIFO\), not a regular file/,
      ),
    );
  });

  it('a socket at .gatehouse/config.json is refused', async () => {
    const d = repo();
    await socketAt(path.join(d, '.gatehouse', 'config.json'));
    expect(() => loadProjectConfig({ repoDir: d })).toThrow(/it is a socket, not a regular file/);
  });

  it('a config over 1 MiB is refused without being parsed', () => {
    const d = repo();
    writeFileSync(path.join(d, '.gatehouse', 'config.json'), `{${' '.repeat(1024 * 1024)}}`);
    expect(() => loadProjectConfig({ repoDir: d })).toThrow(/is 1048578 bytes; at most 1048576 bytes/);
  });

  it('a FIFO at .gatehouse/policy.json, or at the policy file its config names, fails the policy at once', async () => {
    const d = repo();
    fifoAt(path.join(d, '.gatehouse', 'policy.json'));
    await quickly(() =>
      expect(resolveRunPolicy({ repoDir: d })).rejects.toThrow(/policy\.json: it is a named pipe \(FIFO\)/),
    );
    const e = repo();
    fifoAt(path.join(e, '.gatehouse', 'named.json'));
    await quickly(() =>
      expect(
        resolveRunPolicy({ repoDir: e, repoPolicy: { file: path.join(e, '.gatehouse', 'named.json') } }),
      ).rejects.toThrow(/named\.json: it is a named pipe \(FIFO\)/),
    );
  });

  it('a FIFO lockfile is not read: the setup cache key says what it is', async () => {
    const d = repo();
    fifoAt(path.join(d, 'package.json'));
    writeFileSync(path.join(d, 'package-lock.json'), '{}');
    const hashes = await quickly(() => lockfileHashes(d));
    expect(Object.keys(hashes).sort()).toEqual(['package-lock.json', 'package.json']);
    expect(hashes['package.json']).not.toBe(hashes['package-lock.json']);
  });

  describe('gatehouse run', () => {
    beforeAll(() => {
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
    });

    it('with a FIFO policy stops before anything starts, exit 2, with the file named', async () => {
      const d = repo();
      fifoAt(path.join(d, '.gatehouse', 'policy.json'));
      const state = mkdtempSync(path.join(os.tmpdir(), 'gh-special-state-'));
      const script = path.join(state, 'script.json');
      writeFileSync(script, JSON.stringify({ turns: [{ final: 'done' }] }));
      const result = await new Promise<{ code: number | null; err: string; ms: number }>((resolve, reject) => {
        const started = Date.now();
        const child = spawn(
          process.execPath,
          [cli, 'run', 'do nothing', '--repo', d, '--model', `scripted:${script}`, '--state-dir', state],
          { cwd: d, stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, err, ms: Date.now() - started });
        });
      });
      expect(result.err).toMatch(/policy\.json: it is a named pipe \(FIFO\), not a regular file/);
      expect(result.code).toBe(2);
      // The FIFO's writer comes after 3 s: a read that waited on it would take at least that long.
      expect(result.ms).toBeLessThan(3000);
    });
  });
});
