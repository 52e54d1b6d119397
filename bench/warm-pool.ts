import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { SandboxDriver } from '@gatehouse/orchestrator';
import { ratio, summarize } from './stats';

const N = Number(process.env.BENCH_POOL ?? 15);

/** `n` sandboxes created and destroyed one after another: the total and each phase, p50 and p99. */
export async function starts(driver: SandboxDriver, repoDir: string, n: number) {
  const totals: number[] = [];
  const phases: Record<string, number[]> = {};
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const s = await driver.createSandbox({ runId: newId('run'), repoDir });
    totals.push(performance.now() - t);
    for (const [k, v] of Object.entries(s.info.timings)) (phases[k] ??= []).push(v);
    await s.destroy();
  }
  return {
    total: summarize(totals),
    phasesP50: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, summarize(v).p50])),
    phasesP99: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, summarize(v).p99])),
  };
}

/** A driver's cold starts, `n` of them, the driver closed after. */
async function coldStarts(opts: Parameters<typeof SandboxDriver.start>[0], repoDir: string, n: number) {
  const driver = await SandboxDriver.start(opts);
  try {
    return await starts(driver, repoDir, n);
  } finally {
    await driver.close();
  }
}

/**
 * The cold path against sandboxes claimed from a warm pool, in the same run: the claim itself
 * (from asking the pool to a sandbox bound to the run: its identity handed over NATS and taken),
 * and the whole createSandbox with the claim (copy-in and the daemon's ready included). Each claim
 * waits for the background refill first, so every one is taken from a full pool, as a worker with
 * a sized pool sees it. The cold path twice: as before this work (each network made at its
 * sandbox's start: the baseline) and now (a network made ahead, docs/warm-pool.md).
 */
export async function benchWarmPool(log: (m: string) => void, repoDir = path.resolve('examples', 'hello')) {
  log(`warm pool: cold path baseline (no network made ahead) x${N}`);
  const baseline = await coldStarts({ networks: 0 }, repoDir, N);
  log(`warm pool: cold path x${N}`);
  const coldRun = await coldStarts({ networks: 1 }, repoDir, N);
  const warm = await SandboxDriver.start({ warmPool: { size: 2 } });
  const claims: number[] = [];
  const totals: number[] = [];
  const phases: Record<string, number[]> = {};
  try {
    log(`warm pool: claims x${N}`);
    await warm.pool!.fill();
    for (let i = 0; i < N; i++) {
      for (let w = 0; w < 300 && warm.pool!.available(warm.images.sandbox) < 2; w++)
        await new Promise((r) => setTimeout(r, 50));
      const t = performance.now();
      const s = await warm.createSandbox({ runId: newId('run'), repoDir });
      totals.push(performance.now() - t);
      if (s.info.timings.claim !== undefined) claims.push(s.info.timings.claim);
      for (const [k, v] of Object.entries(s.info.timings)) (phases[k] ??= []).push(v);
      await s.destroy();
    }
  } finally {
    await warm.close();
  }
  const claimMs = summarize(claims);
  const pooled = summarize(totals);
  return {
    claimMs: { ...claimMs, target: 'p50 <= 20' },
    pooledCreateSandboxMs: pooled,
    pooledPhasesP50: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, summarize(v).p50])),
    coldMs: { ...coldRun.total, target: 'p50 <= 400' },
    coldPhasesP50: coldRun.phasesP50,
    coldPhasesP99: coldRun.phasesP99,
    coldBaselineMs: baseline.total,
    coldBaselinePhasesP50: baseline.phasesP50,
    ratioClaimToCold: { p50: ratio(claimMs.p50, coldRun.total.p50), p99: ratio(claimMs.p99, coldRun.total.p99) },
    ratioPooledToCold: { p50: ratio(pooled.p50, coldRun.total.p50), p99: ratio(pooled.p99, coldRun.total.p99) },
  };
}
