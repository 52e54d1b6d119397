import { newId } from '@gatehouse/shared';
import { ensureRunImage, resolveToolchainImage, type SandboxDriver } from '@gatehouse/orchestrator';
import { ratio, summarize } from './stats';

const ROUNDS = Number(process.env.BENCH_TOOLCHAIN_COLD ?? 8);

/**
 * Cold start (create, copy-in, ready, destroy) of a sandbox from a derived non-default run image
 * (preset:python's) beside the default one (preset:node's), alternating so both see the same
 * machine load; and the cost of asking for the derived image again once it exists (a hash and two
 * image inspections: what every run with `--image` pays).
 */
export async function benchToolchain(driver: SandboxDriver, repoDir: string, log: (m: string) => void) {
  const derived = await ensureRunImage(await resolveToolchainImage('preset:python', { log }), { log });
  const lookups: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await ensureRunImage(await resolveToolchainImage('preset:python'));
    lookups.push(performance.now() - t);
  }
  const samples: Record<'default' | 'derived', number[]> = { default: [], derived: [] };
  const start = async (kind: 'default' | 'derived'): Promise<void> => {
    const t = performance.now();
    const s = await driver.createSandbox({
      runId: newId('run'),
      repoDir,
      ...(kind === 'derived' ? { image: derived } : {}),
    });
    samples[kind].push(performance.now() - t);
    await s.destroy();
  };
  await start('default'); // warm-up: page cache and the driver's image inspection
  await start('derived');
  samples.default.length = 0;
  samples.derived.length = 0;
  for (let i = 0; i < ROUNDS; i++) {
    await start(i % 2 === 0 ? 'default' : 'derived');
    await start(i % 2 === 0 ? 'derived' : 'default');
  }
  const def = summarize(samples.default);
  const der = summarize(samples.derived);
  return {
    images: { default: driver.images.sandbox, derived },
    coldStartMs: { default: def, derivedPresetPython: der, ratioDerivedToDefault: ratio(der.p50, def.p50) },
    cachedRunImageLookupMs: summarize(lookups),
    target: 'derived cold start p50 <= 1.1x the default',
  };
}
