import { defineConfig } from 'vitest/config';

const UNIT = [
  'shared/test/**/*.test.ts',
  'sandbox-agent/test/**/*.test.ts',
  'orchestrator/test/**/*.test.ts',
  'egress-proxy/test/**/*.test.ts',
  'test/docs/**/*.test.ts',
];

/**
 * System tests that run alone, after the others. Each either changes what the others share (images,
 * the engine's networks and proxies, host bridges, the second engine, registries on random ports) or
 * is sensitive to load (short leases and heartbeat windows, killed NATS nodes, timeouts asserted) or
 * makes heavy load itself (fork bombs, memory hogs, floods, gigabyte files).
 */
const SYSTEM_ALONE = [
  // Shared state: images built, pruned or removed; the engine-wide reaper; host networking.
  'test/e2e/warm-pool.test.ts',
  'test/e2e/worker-warm-pool.test.ts',
  'test/e2e/docker-hosts.test.ts',
  'test/e2e/setup-stale-bridge-ports.test.ts',
  'test/e2e/image-prune.test.ts',
  'test/package/tarball-install.test.ts',
  'test/e2e/toolchain-images.test.ts',
  'test/e2e/redteam12-hostile-toolchain.test.ts',
  'test/e2e/redteam16-toolchain-loader-config.test.ts',
  'test/e2e/redteam12-cache-secrets.test.ts',
  'test/e2e/redteam12-setup-env-names.test.ts',
  'test/e2e/setup-phase.test.ts',
  'test/e2e/mcp-setup.test.ts',
  'test/e2e/lifecycle.test.ts',
  'test/e2e/address-pools.test.ts',
  // Load: made, or felt through timing.
  'test/e2e/limits-*.test.ts',
  'test/e2e/redteam-survivor.test.ts',
  'test/e2e/redteam-root-write-race.test.ts',
  'test/e2e/soak-smoke.test.ts',
  'test/e2e/store-failover.test.ts',
  'test/e2e/jetstream-cluster.test.ts',
  'test/e2e/event-store-cluster.test.ts',
  'test/e2e/queue-workers.test.ts',
  'test/e2e/queue-parts.test.ts',
  'test/e2e/redteam16-stopped-worker.test.ts',
  'test/e2e/telemetry-otlp.test.ts',
  'test/e2e/primitives-exec.test.ts',
  'test/e2e/primitives-files.test.ts',
  'test/e2e/mcp-tools.test.ts',
  'test/e2e/large-files.test.ts',
  'test/e2e/plan-recovery.test.ts',
  'test/e2e/approvals-nats.test.ts',
];

// Three groups, one after the other. The unit tests (no Docker engine, no NATS server of their own:
// in-memory sandboxes, recorded provider traffic, the CLI) run two files at a time. Then the tests
// that start sandboxes, NATS and registries, two files at a time: most of their time is spent
// waiting on the engine, NATS and child processes. Last, the ones listed above, one at a time.
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['test/**/*.test.ts'],
          exclude: ['test/docs/**', '**/node_modules/**', ...SYSTEM_ALONE],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'system-alone',
          include: SYSTEM_ALONE,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
