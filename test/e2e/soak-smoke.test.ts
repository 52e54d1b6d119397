import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages } from '@gatehouse/orchestrator';
import { newInstallation } from '../../bench/soak/runs';
import { runSoak } from '../../bench/soak/soak';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * The soak's own code (bench/soak/), with tiny numbers, on one JetStream node and the main engine:
 * two runs, two workers, one of them SIGKILLed mid-run. Its figures must say what `npm run soak`
 * promises: every run completed, nothing executed twice, no event lost.
 */
let nats: NatsCluster;

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  nats = await startNatsCluster(images.nats, 1);
}, 120_000);

afterAll(async () => {
  await nats?.stop();
});

describe('the soak, small', () => {
  it('two runs through a worker kill: both complete, doubleExecutions 0, lostEvents 0', async () => {
    const lines: string[] = [];
    const report = await runSoak({
      inst: newInstallation(nats.servers[0]!),
      engines: [{ name: 'main' }],
      throughputRuns: 0,
      chaosRuns: 2,
      concurrency: 1,
      // Each worker keeps a pooled sandbox: runs are served from it, and a killed worker's pool is reaped.
      warmPool: 1,
      sleepSeconds: 8,
      chaosSleepSeconds: 8,
      leaseTtl: '3s',
      chaos: { workerKills: 1, sandboxKills: 0, natsKills: 0, maxMs: 40_000, gapMs: [5000, 7000], natsDownMs: 0 },
      waitMs: 60_000,
      log: (m) => lines.push(m),
    });
    expect(
      report.chaos.actions.map((a) => a.kind),
      lines.join('\n'),
    ).toEqual(['worker-kill', 'worker-start']);
    expect(report.notCompleted).toEqual([]);
    expect(report.runsCompleted).toBe(2);
    expect(report.byStatus).toEqual({ 'completed:final': 2 });
    expect(report.problems).toEqual([]);
    expect(report.doubleExecutions).toBe(0);
    expect(report.lostEvents).toBe(0);
    // The kill hit a run in flight: another worker continued it from the store's log.
    expect(report.resumes).toBeGreaterThanOrEqual(1);
    expect(report.runsPerMinute).toEqual({ oneWorker: null, twoWorkers: null });
    // Claimed pooled sandboxes are the runs' (through their claim records), and were seen running.
    expect(report.capacity.peakSandboxes.main).toBeGreaterThanOrEqual(1);
  }, 150_000);
});
