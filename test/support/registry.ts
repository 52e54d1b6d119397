import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERDACCIO = path.join(ROOT, 'test', 'registry', 'node_modules', 'verdaccio', 'bin', 'verdaccio');

export interface TestRegistry {
  url: string;
  host: string;
  port: number;
  /** Publishes a package of one file (`index.js` exporting `value`) and returns its name@version. */
  publish(name: string, version: string, value: string): Promise<string>;
  /** Publishes a package folder as it is (its package.json names it) and returns its name@version. */
  publishDir(dir: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A real npm registry (verdaccio) on the given address, with no uplink: it serves only what a test
 * publishes to it and never forwards a request anywhere else.
 */
export async function startRegistry(host: string, port: number): Promise<TestRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-registry-'));
  mkdirSync(path.join(dir, 'storage'));
  writeFileSync(
    path.join(dir, 'config.yaml'),
    [
      `storage: ${path.join(dir, 'storage')}`,
      `listen: ${host}:${port}`,
      'auth:',
      '  htpasswd:',
      `    file: ${path.join(dir, 'htpasswd')}`,
      '    max_users: 10',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'log: { type: stdout, format: json, level: warn }',
      'web: { enable: false }',
      '',
    ].join('\n'),
  );
  const url = `http://${host}:${port}`;
  const child: ChildProcess = spawn(process.execPath, [VERDACCIO, '-c', path.join(dir, 'config.yaml')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  child.stdout?.resume();
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${url}/-/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline || i > 300) {
      await stop();
      throw new Error(`verdaccio did not answer on ${url} within 30 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const user = await fetch(`${url}/-/user/org.couchdb.user:gatehouse`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'gatehouse', password: 'gatehouse-test-password' }),
  });
  const { token } = (await user.json()) as { token?: string };
  if (!token) throw new Error(`verdaccio gave no token (${user.status})`);
  const publishDir = async (dir: string): Promise<string> => {
    const npmrc = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-npmrc-')), '.npmrc');
    try {
      writeFileSync(npmrc, `registry=${url}/\n//${host}:${port}/:_authToken=${token}\n`);
      await run('npm', ['publish', '--ignore-scripts', '--userconfig', npmrc, '--registry', `${url}/`], {
        cwd: dir,
        timeout: 60_000,
      });
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
      return `${pkg.name}@${pkg.version}`;
    } finally {
      rmSync(path.dirname(npmrc), { recursive: true, force: true });
    }
  };
  const publish = async (name: string, version: string, value: string): Promise<string> => {
    const pkg = mkdtempSync(path.join(os.tmpdir(), 'gh-pkg-'));
    try {
      writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }));
      writeFileSync(path.join(pkg, 'index.js'), `module.exports = { value: ${JSON.stringify(value)} };\n`);
      const npmrc = path.join(pkg, '.npmrc');
      writeFileSync(npmrc, `registry=${url}/\n//${host}:${port}/:_authToken=${token}\n`);
      await run('npm', ['publish', '--userconfig', npmrc, '--registry', `${url}/`], { cwd: pkg, timeout: 60_000 });
      return `${name}@${version}`;
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  };
  return { url, host, port, publish, publishDir, stop };
}
