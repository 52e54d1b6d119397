import { defineConfig } from 'vitest/config';

const UNIT = [
  'shared/test/**/*.test.ts',
  'sandbox-agent/test/**/*.test.ts',
  'orchestrator/test/**/*.test.ts',
  'egress-proxy/test/**/*.test.ts',
  'test/docs/**/*.test.ts',
];

// Two groups, one after the other. The unit tests (no Docker engine, no NATS server of their own:
// in-memory sandboxes, recorded provider traffic, the CLI) run two files at a time. Then the tests
// that start sandboxes, NATS and registries run one file at a time: they share one Docker engine
// and one NATS container, running them in parallel would measure contention, not behaviour, and
// two cores are all CI has.
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
          exclude: ['test/docs/**', '**/node_modules/**'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
