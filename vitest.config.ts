import { defineConfig } from 'vitest/config';

// Tests that start sandboxes share one Docker engine and one NATS container; running files in
// parallel would measure contention, not behaviour, and two cores are all CI has.
export default defineConfig({
  test: {
    include: [
      'shared/test/**/*.test.ts',
      'sandbox-agent/test/**/*.test.ts',
      'orchestrator/test/**/*.test.ts',
      'egress-proxy/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    globalSetup: ['test/support/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
