import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { SandboxDriver } from '@gatehouse/orchestrator';
import { ratio, summarize } from './stats';

const N = Number(process.env.BENCH_POOL ?? 15);

/** Creates sandboxes one after another; returns the totals and each phase's p50. */
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

/**
 * The cold path against sandboxes claimed from a warm pool, in the same run: the claim itself
 * (taking a started sandbox and binding the run's identity to it), and the whole createSandbox
 * with the claim (copy-in and the daemon's ready included). Each claim waits for the background
 * refill first, so every one is taken from a full pool, as a worker with a sized pool sees it.
 */
export async function benchWarmPool(log: (m: string) => void, repoDir = path.resolve('examples', 'hello')) {
  const cold = await SandboxDriver.start({});
  let coldRun;
  try {
    log(`warm pool: cold path x${N}`);
    coldRun = await starts(cold, repoDir, N);
  } finally {
    await cold.close();
  }
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
    ratioClaimToCold: { p50: ratio(claimMs.p50, coldRun.total.p50), p99: ratio(claimMs.p99, coldRun.total.p99) },
    ratioPooledToCold: { p50: ratio(pooled.p50, coldRun.total.p50), p99: ratio(pooled.p99, coldRun.total.p99) },
  };
}
