import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docker, egressNetworkGateway } from '@gatehouse/orchestrator';
import { startRegistry } from '../test/support/registry';
import { ratio, summarize } from './stats';

const ROUNDS = Number(process.env.BENCH_SETUP_ROUNDS ?? 5);
const CLI = path.resolve('orchestrator', 'bin', 'gatehouse.mjs'); // bench.sh runs from the repository root

type Kind = 'miss' | 'hit' | 'noSetup';

/**
 * Issue 12: run start with a setup-cache hit against the first setup of the same repository. What a
 * user waits for: `gatehouse run` through the real CLI, from its spawn to the agent's sandbox being
 * ready (the log's `sandbox.started`, written just before the first model call), with a scripted
 * model that answers at once. The repository's `setup: ["npm ci"]` installs a package from a real
 * npm registry (verdaccio on the host's address on gatehouse's outside network, reached through the
 * run's egress proxy). A miss gets a fresh cache key each time by a second `egress.setup` entry that
 * nothing contacts (a different port each time); a hit keeps its own, so both do the same work. A
 * run of the same repository without setup is the floor. The three alternate, so all see the same
 * load; the cache images made are removed.
 */
export async function benchSetupCache(log: (m: string) => void): Promise<Record<string, unknown>> {
  const gateway = await egressNetworkGateway(docker());
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const registry = await startRegistry(gateway, port);
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-setup-'));
  const cacheImages = new Set<string>();
  try {
    await registry.publish('gh-bench-dep', '1.0.0', 'from-the-registry');
    const repo = jsRepo(path.join(scratch, 'repo'), registry.url);
    const model = path.join(scratch, 'model.json');
    writeFileSync(model, JSON.stringify({ turns: [{ final: 'Nothing to do.' }] }));
    const config = (kind: Kind, i: number): string => {
      const file = path.join(scratch, `config-${kind}-${i}.json`);
      // The unused entry's port: the hit's is fixed, each miss's its own (a port nothing listens on).
      const unused = `${gateway}:${kind === 'hit' ? port + 1 : port + 2 + i}`;
      const setup = kind === 'noSetup' ? {} : { setup: ['npm ci --no-audit --no-fund'] };
      writeFileSync(file, JSON.stringify({ ...setup, egress: { setup: [`${gateway}:${port}`, unused] } }));
      return file;
    };
    const samples: Record<Kind, { ready: number[]; total: number[] }> = {
      miss: { ready: [], total: [] },
      hit: { ready: [], total: [] },
      noSetup: { ready: [], total: [] },
    };
    let primed = false; // whether the hits' key has its cache
    let runs = 0;
    const once = async (kind: Kind, i: number, record = true): Promise<void> => {
      const r = await cliRun(repo, model, config(kind, i), path.join(scratch, `state-${runs++}`));
      if (r.image && r.cacheHit === false) cacheImages.add(r.image);
      const expected = kind === 'noSetup' ? undefined : kind === 'hit' && primed;
      if (r.cacheHit !== expected)
        throw new Error(`bench setup-cache: a ${kind} run reported cacheHit ${String(r.cacheHit)}`);
      if (kind === 'hit') primed = true;
      if (!record) return;
      samples[kind].ready.push(r.readyMs);
      samples[kind].total.push(r.totalMs);
    };
    log('setup cache: first setup of the hit key, and a warm-up of each kind');
    await once('hit', 0, false); // the first setup of the key the hits use: a miss that makes their cache
    await once('hit', 0, false);
    await once('miss', ROUNDS + 1, false);
    await once('noSetup', 0, false);
    const order: Kind[][] = [
      ['miss', 'hit', 'noSetup'],
      ['hit', 'noSetup', 'miss'],
      ['noSetup', 'miss', 'hit'],
    ];
    for (let i = 0; i < ROUNDS; i++) {
      log(`setup cache: round ${i + 1}/${ROUNDS}`);
      for (const kind of order[i % order.length]!) await once(kind, i);
    }
    const s = (k: Kind, m: 'ready' | 'total') => summarize(samples[k][m]);
    return {
      measured: 'gatehouse run through the CLI, scripted model answering at once: spawn to sandbox.started (ready)',
      setup: 'npm ci of one package from a local verdaccio, through the egress proxy',
      rounds: ROUNDS,
      readyMs: { firstSetupMiss: s('miss', 'ready'), cacheHit: s('hit', 'ready'), noSetup: s('noSetup', 'ready') },
      wholeRunMs: { firstSetupMiss: s('miss', 'total'), cacheHit: s('hit', 'total'), noSetup: s('noSetup', 'total') },
      ratioHitToMiss: ratio(s('hit', 'ready').p50, s('miss', 'ready').p50),
      ratioHitToNoSetup: ratio(s('hit', 'ready').p50, s('noSetup', 'ready').p50),
    };
  } finally {
    for (const image of cacheImages)
      await docker()
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
    await registry.stop();
    rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** A committed JavaScript repository whose lockfile pins one package of the bench's registry. */
function jsRepo(dir: string, registryUrl: string): string {
  const pkg = JSON.stringify({ name: 'bench-app', version: '1.0.0', dependencies: { 'gh-bench-dep': '1.0.0' } });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), pkg);
  writeFileSync(path.join(dir, '.npmrc'), `registry=${registryUrl}/\n`);
  writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n');
  writeFileSync(path.join(dir, 'index.js'), "console.log(require('gh-bench-dep').value);\n");
  execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: dir, timeout: 60_000 });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=bench@gatehouse', '-c', 'user.name=bench', 'commit', '-qm', 'bench');
  return dir;
}

interface CliResult {
  readyMs: number;
  totalMs: number;
  cacheHit: boolean | undefined;
  image: string | undefined;
}

/** One headless `gatehouse run`; its times from the spawn, read back from its log. */
async function cliRun(repo: string, model: string, config: string, stateDir: string): Promise<CliResult> {
  const args = [CLI, 'run', 'bench', '--repo', repo, '--model', `scripted:${model}`, '--config', config];
  const spawnedAt = Date.now();
  const t = performance.now();
  const child = spawn(process.execPath, [...args, '--state-dir', stateDir, '--json'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, CI: 'true', GATEHOUSE_STATE_DIR: '' },
    timeout: 300_000,
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const totalMs = performance.now() - t;
  if (code !== 0) throw new Error(`bench setup-cache: gatehouse run exited ${code}: ${stderr}`);
  const runs = readdirSync(path.join(stateDir, 'runs'));
  const events = readFileSync(path.join(stateDir, 'runs', runs[0]!, 'events.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; ts: string; data: Record<string, unknown> });
  const ready = events.find((e) => e.type === 'sandbox.started');
  const setup = events.find((e) => e.type === 'setup.completed');
  if (!ready) throw new Error('bench setup-cache: the run wrote no sandbox.started');
  return {
    readyMs: Date.parse(ready.ts) - spawnedAt,
    totalMs,
    cacheHit: setup ? (setup.data.cacheHit as boolean) : undefined,
    image: setup ? (setup.data.image as string) : undefined,
  };
}
