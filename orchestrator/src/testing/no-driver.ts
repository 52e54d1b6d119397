import type { SandboxDriver } from '../sandbox/index';

/**
 * A `SandboxDriver` for code that must not reach Docker (a refusal, a sub-agent whose sandbox a
 * test makes itself): touching it in any way throws, so a test that passes never used it.
 */
export function noDriver(): SandboxDriver {
  return new Proxy({} as SandboxDriver, {
    get: (_target, key) => {
      throw new Error(`the sandbox driver was used (${String(key)}) where no Docker is expected`);
    },
  });
}
