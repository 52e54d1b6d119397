import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { SandboxDriver } from '@gatehouse/orchestrator';
import { ratio, summarize } from './stats';

const N = Number(process.env.BENCH_POOL ?? 15);

/** Creates sandboxes one after another; returns the totals and each phase's p50. */
async function starts(driver: SandboxDriver, repoDir: string, n: number) {
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
 * with the claim (copy-in and the daemon's ready included).
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
  return { cold: coldRun, ratio };
}
