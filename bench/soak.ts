import path from 'node:path';
import { ensureBuiltImage, ensureImages, ensureRuntimeImage } from '@gatehouse/orchestrator';
import { startNatsCluster } from '../test/support/nats-cluster';
import { killAllWorkers, type Engine } from './soak/cli';
import { mergeResults } from './soak/results';
import { newInstallation } from './soak/runs';
import { runSoak } from './soak/soak';
import { benchWarmPool } from './warm-pool';

/**
 * `npm run soak` (scripts/soak.sh starts the second engine first): the warm pool's claim figures,
 * then the soak on a three-node JetStream cluster. Prints the figures as JSON on stdout and merges
 * `warmPool` and `soak` into bench/results/latest.json. `--images` prints the image tags runs need
 * (for scripts/second-docker-host.sh load-images) and exits.
 */
const env = process.env;
const num = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
const log = (m: string) => process.stderr.write(`[soak] ${m}\n`);

async function imageTags(): Promise<string[]> {
  const images = await ensureImages({ prune: false });
  const toolchain = await ensureBuiltImage('preset-node', { prune: false });
  return [images.nats, images.egress, toolchain, await ensureRuntimeImage({ prune: false }), images.sandbox];
}

/** The bench's warm-pool section; a failure is recorded in it (and the soak goes on), never hidden. */
async function warmPoolFigures(): Promise<Record<string, unknown>> {
  try {
    return await benchWarmPool(log);
  } catch (e) {
    log(`warm pool bench failed: ${(e as Error).message}`);
    return { error: (e as Error).message.slice(0, 2000), when: new Date().toISOString() };
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--images')) {
    process.stdout.write(`${(await imageTags()).join('\n')}\n`);
    return;
  }
  const images = await ensureImages({ prune: false });
  const warmPool = env.SOAK_WARM_POOL === '0' ? undefined : await warmPoolFigures();
  const engines: Engine[] = [{ name: 'main' }];
  if (env.SOAK_DOCKER_HOST2)
    engines.push({ name: 'second', dockerHost: env.SOAK_DOCKER_HOST2, certPath: env.SOAK_DOCKER_CERT_PATH2 ?? '' });
  else log('no SOAK_DOCKER_HOST2: both workers drive the main engine');
  const size = num('SOAK_NATS_NODES', 3);
  const nats = await startNatsCluster(images.nats, size);
  // Stopped from outside (soak.sh's timeout, ^C): the workers and the cluster go too, not only this process.
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      killAllWorkers();
      void nats.stop().finally(() => process.exit(signal === 'SIGTERM' ? 143 : 130));
    });
  try {
    const report = await runSoak({
      inst: newInstallation(nats.servers.join(',')),
      engines,
      ...(size > 1
        ? { nats: { size, kill: (n: number) => nats.kill(n), restart: (n: number) => nats.restart(n) } }
        : {}),
      throughputRuns: num('SOAK_RUNS', 8),
      chaosRuns: num('SOAK_CHAOS_RUNS', 16),
      concurrency: num('SOAK_CONCURRENCY', 2),
      warmPool: num('SOAK_WORKER_POOL', 2),
      sleepSeconds: num('SOAK_SLEEP', 3),
      chaosSleepSeconds: num('SOAK_CHAOS_SLEEP', 10),
      leaseTtl: env.SOAK_LEASE_TTL ?? '6s',
      chaos: {
        workerKills: num('SOAK_WORKER_KILLS', 3),
        sandboxKills: num('SOAK_SANDBOX_KILLS', 3),
        natsKills: num('SOAK_NATS_KILLS', 1),
        maxMs: num('SOAK_CHAOS_MAX_MS', 8 * 60_000),
        gapMs: [num('SOAK_CHAOS_GAP_MIN_MS', 3000), num('SOAK_CHAOS_GAP_MAX_MS', 8000)],
        natsDownMs: num('SOAK_NATS_DOWN_MS', 10_000),
      },
      waitMs: num('SOAK_WAIT_MS', 6 * 60_000),
      log,
    });
    const soak = {
      when: new Date().toISOString(),
      engines: engines.map((e) => e.dockerHost ?? 'local'),
      natsNodes: size,
      ...report,
    };
    mergeResults(path.resolve('bench', 'results', 'latest.json'), { ...(warmPool ? { warmPool } : {}), soak });
    process.stdout.write(`${JSON.stringify({ ...(warmPool ? { warmPool } : {}), soak }, null, 2)}\n`);
  } finally {
    await nats.stop();
  }
}

await main();
