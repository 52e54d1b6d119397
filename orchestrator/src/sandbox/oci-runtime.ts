import type Docker from 'dockerode';

/**
 * The OCI runtime sandboxes start under: `crun` when the Docker engine lists it (it starts a
 * container in about half of runc's time), else the engine's default. Asked once per driver.
 */
export async function fasterRuntime(d: Docker, env = process.env): Promise<string | undefined> {
  if (env.GATEHOUSE_OCI_RUNTIME) return env.GATEHOUSE_OCI_RUNTIME === 'default' ? undefined : env.GATEHOUSE_OCI_RUNTIME;
  const info = (await d.info()) as { Runtimes?: Record<string, unknown> };
  return info.Runtimes && 'crun' in info.Runtimes ? 'crun' : undefined;
}

/** Whether a Docker error says the OCI runtime itself could not run the container. */
export function isRuntimeFailure(e: unknown): boolean {
  return /OCI runtime (create|start|exec) failed|unknown runtime/i.test(e instanceof Error ? e.message : String(e));
}
