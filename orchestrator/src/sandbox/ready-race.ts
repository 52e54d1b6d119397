import type Docker from 'dockerode';
import { SandboxError } from './errors';

/** Waits for the daemon's ready message; a container that exits first fails with its logs. */
export async function raceReady(
  ready: Promise<void>,
  container: Docker.Container,
  sandboxId: string,
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let exited = false;
  const died = container.wait().then(async (r: { StatusCode: number }) => {
    exited = true;
    const logs = (await container.logs({ stdout: true, stderr: true, tail: 30 })).toString('utf8');
    throw new SandboxError(`sandbox ${sandboxId} exited with code ${r.StatusCode} before it was ready:\n${logs}`);
  });
  try {
    await Promise.race([
      ready,
      died,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new SandboxError(`sandbox ${sandboxId} was not ready within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (!exited) died.catch(() => undefined);
  }
}
