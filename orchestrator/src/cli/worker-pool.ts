import { POOL_SOCKET_ENV, SandboxDriver, servePool } from '../sandbox/index';
import { createLogger } from './logger';

export interface WorkerPool {
  /** What the worker's run children need in their environment to claim from it. */
  env: Record<string, string>;
  /** Stops lending, then removes every sandbox no run claimed. */
  close(): Promise<void>;
}

/**
 * `gatehouse worker --warm-pool N`: the worker keeps N sandboxes of the default image started
 * (each with a one-time NATS user only) for the runs of `stateDir`, and lends them to its run
 * children over a Unix socket (sandbox/pool-link.ts). A child claims one as its run starts, or
 * starts cold when none is ready. The pool is removed when the worker stops.
 */
export async function startWorkerPool(
  size: number,
  stateDir: string,
  log: (line: string) => void,
  dockerHost?: string,
): Promise<WorkerPool> {
  // The pool must be on the engine the children use (the worker passes them DOCKER_HOST).
  if (dockerHost) process.env.DOCKER_HOST = dockerHost;
  const driver = await SandboxDriver.start({ log: createLogger('gatehouse worker'), warmPool: { size }, stateDir });
  try {
    const server = await servePool(driver.claimer!, driver.poolStateDir(), (why) => log(`a run starts cold: ${why}`));
    return {
      env: { [POOL_SOCKET_ENV]: server.socketPath },
      close: async () => {
        await server.close();
        await driver.close();
      },
    };
  } catch (e) {
    await driver.close();
    throw e;
  }
}
