import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, ensureImages, IMAGE_SOURCE_LABEL, verifyLog } from '@gatehouse/orchestrator';
import { ALLOWED_IN_TARBALL, REQUIRED_IN_TARBALL } from '../support/package';

/**
 * The package as a user gets it: `npm pack` (prepack builds the bundles), `npm install -g` of the
 * tarball into a temporary prefix (its dependencies from the npm registry, through the npm cache),
 * then the installed `gatehouse` with only that prefix's bin (and node and git) on the PATH, a
 * temporary HOME and XDG directories, and a temporary working directory: it must find its daemon
 * bundle and image contexts in its own install, and the images this checkout already built (their
 * tags hash the same contexts). Images the installed copy builds carry its own source label and are
 * removed afterwards; no other image is touched.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const rootVersion = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

let tmp: string;
let installRoot: string;
let tarballFiles: Array<{ path: string }>;
let tarballSize: number;
let env: NodeJS.ProcessEnv;
let work: string;

function npm(args: string[], cwd: string, timeout: number): SpawnSyncReturns<string> {
  const r = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout,
    env: { ...process.env, npm_config_yes: 'false' },
  });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}: ${r.stderr}${r.error ?? ''}`);
  return r;
}

function gatehouse(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  return spawnSync('gatehouse', args, {
    cwd: opts.cwd ?? work,
    env: opts.env ?? env,
    encoding: 'utf8',
    timeout: 120_000,
  });
}

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-package-'));
  const packDir = path.join(tmp, 'pack');
  const prefix = path.join(tmp, 'prefix');
  mkdirSync(packDir);
  const packed = npm(['pack', '--pack-destination', packDir, '--json'], root, 120_000);
  const [pack] = JSON.parse(packed.stdout) as Array<{ filename: string; size: number; files: Array<{ path: string }> }>;
  tarballFiles = pack!.files;
  tarballSize = pack!.size;
  const tarball = path.join(packDir, pack!.filename);
  // --prefer-offline: what the checkout's own `npm ci` fetched comes from the cache.
  npm(
    ['install', '--global', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund'],
    tmp,
    240_000,
  );
  const home = path.join(tmp, 'home');
  work = path.join(tmp, 'work');
  for (const d of [home, work]) mkdirSync(d);
  env = {
    PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    TMPDIR: os.tmpdir(),
    CI: 'true',
    ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    ...(process.env.GATEHOUSE_IMAGE_BASE ? { GATEHOUSE_IMAGE_BASE: process.env.GATEHOUSE_IMAGE_BASE } : {}),
  };
  const which = spawnSync('sh', ['-c', 'command -v gatehouse'], { env, encoding: 'utf8' });
  expect(which.stdout.trim()).toBe(path.join(prefix, 'bin', 'gatehouse'));
  installRoot = path.join(prefix, 'lib', 'node_modules', 'gatehouse-cli');
}, 400_000);

afterAll(async () => {
  // Only what the installed copy built itself: its images are labelled with its own install root.
  if (installRoot) {
    const own = await docker().listImages({ filters: { label: [`${IMAGE_SOURCE_LABEL}=${installRoot}`] } });
    for (const image of own)
      await docker()
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined);
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 120_000);

describe('the npm tarball, installed with npm install -g', () => {
  it('holds only what runs: the bundles, the image contexts, no sources or tests, a bounded size', () => {
    const files = tarballFiles.map((f) => f.path);
    expect(files.filter((f) => !ALLOWED_IN_TARBALL.some((re) => re.test(f)))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining([...REQUIRED_IN_TARBALL]));
    expect(tarballSize).toBeLessThan(2 * 1024 * 1024);
    // The installed files are the packed ones, under the prefix, not links into the checkout.
    expect(statSync(path.join(installRoot, 'orchestrator/dist/gatehouse.mjs')).isFile()).toBe(true);
    expect(readdirSync(installRoot).sort()).toEqual([
      'README.md',
      'images',
      'node_modules',
      'orchestrator',
      'package.json',
      'scripts',
    ]);
  });

  it('gatehouse --version prints the package version; --help lists the commands', () => {
    const version = gatehouse(['--version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(rootVersion);
    const help = gatehouse(['--help']);
    expect(help.status, help.stderr).toBe(0);
    for (const command of ['doctor', 'images', 'run', 'resume', 'verify'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it("doctor --json: all ok, its own files found in the install, and this checkout's images reused", async () => {
    const r = gatehouse(['doctor', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; ok: boolean; detail: string }>;
    };
    expect(report.ok).toBe(true);
    const detail = (name: string) => report.checks.find((c) => c.name === name)?.detail;
    expect(detail('gatehouse')).toBe(`${rootVersion} (package at ${installRoot})`);
    expect(detail('daemon bundle')).toBe(path.join(installRoot, 'images/sandbox/build/daemon.cjs'));
    // Same contexts, same tags: the install found the images this checkout built and built none.
    const images = await ensureImages({ prune: false });
    expect(detail('sandbox image')?.split(', ')).toContain(images.sandbox);
    expect(detail('nats image')?.split(', ')).toContain(images.nats);
  });

  it('doctor says what is missing and the command that fixes it (no Docker engine at DOCKER_HOST)', () => {
    const r = gatehouse(['doctor', '--json'], {
      env: { ...env, DOCKER_HOST: `unix://${path.join(tmp, 'no-docker.sock')}` },
    });
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; fix?: string }> };
    expect(report.ok).toBe(false);
    const engine = report.checks.find((c) => c.name === 'docker engine');
    expect(engine?.ok).toBe(false);
    expect(engine?.fix).toContain('apt-get install -y docker.io');
  });

  it('runs a scripted agent on a repository: exit 0, the fix in the diff, a log that verifies', () => {
    const { r, repo } = scriptedRun(env);
    expect(r.status, r.stderr).toBe(0);
    const events = eventsOf(r.stdout);
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', filesChanged: ['src/math.js'] },
    });
    // The run is kept in the temporary XDG state home, by repository.
    const groups = path.join(env.XDG_STATE_HOME!, 'gatehouse', 'repos');
    const runDir = readdirSync(groups)
      .map((group) => path.join(groups, group, 'runs', events[0]!.runId))
      .find((dir) => existsSync(dir))!;
    const logged = readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n');
    expect(logged.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(events.map((e) => e.type));
    expect(readFileSync(path.join(runDir, 'changes.diff'), 'utf8')).toContain('+  return a + b;');
    // The hash chain here; the MACs with the installed copy's own key (in the temporary XDG config), by its verify.
    expect(verifyLog(path.join(runDir, 'events.jsonl'), { key: null }).ok).toBe(true);
    const verified = gatehouse(['verify', events[0]!.runId, '--json'], { cwd: repo });
    expect(verified.status, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ runId: events[0]!.runId, ok: true });
  });

  it('first use on a machine without its sandbox image: doctor names the fix, the first run builds it', () => {
    // Another node binary than the one this checkout's images carry: the sandbox runtime (the host's
    // node and git) and the run image derived from it are missing, as on a fresh machine, and the
    // installed copy must build them from its own files (assemble-runtime.sh, lib.sh, daemon.cjs).
    const nodeDir = path.join(tmp, 'other-node');
    mkdirSync(nodeDir);
    copyFileSync(process.execPath, path.join(nodeDir, 'node'));
    chmodSync(path.join(nodeDir, 'node'), 0o755);
    const fresh = { ...env, PATH: `${nodeDir}:${env.PATH}` };
    const before = gatehouse(['doctor', '--json'], { env: fresh });
    expect(before.status).toBe(1);
    const missing = (JSON.parse(before.stdout) as { checks: Array<{ name: string; ok: boolean; fix?: string }> })
      .checks;
    expect(missing.find((c) => c.name === 'sandbox image')).toMatchObject({ ok: false });
    expect(missing.find((c) => c.name === 'sandbox image')?.fix).toMatch(/^gatehouse images build/);
    expect(missing.find((c) => c.name === 'patchelf')?.ok).toBe(true);

    const { r } = scriptedRun(fresh);
    expect(r.status, r.stderr).toBe(0);
    expect(eventsOf(r.stdout).at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    const after = gatehouse(['doctor', '--json'], { env: fresh });
    expect(after.status, after.stdout).toBe(0);
  }, 300_000);
});

/** The demo's scripted fix of examples/failing-test, on a fresh copy of it, with the installed command. */
function scriptedRun(runEnv: NodeJS.ProcessEnv): { r: SpawnSyncReturns<string>; repo: string } {
  const repo = mkdtempSync(path.join(tmp, 'failing-test-'));
  cpSync(path.join(root, 'examples/failing-test'), repo, { recursive: true });
  const script = path.join(repo, '..', `${path.basename(repo)}.script.json`);
  cpSync(path.join(root, 'examples/scripts/fix-failing-test.json'), script);
  const r = gatehouse(
    [
      'run',
      'fix the failing tests',
      '--repo',
      repo,
      '--policy',
      path.join(repo, '.gatehouse/policy.json'),
      '--model',
      `scripted:${script}`,
      '--json',
    ],
    { cwd: repo, env: runEnv },
  );
  return { r, repo };
}

function eventsOf(stdout: string): Array<{ type: string; runId: string; data: Record<string, unknown> }> {
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; runId: string; data: Record<string, unknown> });
}
