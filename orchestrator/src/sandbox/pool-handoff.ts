import type Docker from 'dockerode';
import type { NatsConnection } from 'nats';
import { poolIdentitySubject, poolWaitingSubject } from '@gatehouse/shared';
import { SandboxError } from './errors';
import { poolBootstrapCreds, type NatsIdentity } from './nats-auth';
import { bindPoolBootstrap, identityJson, type RunIdentity } from './run-identity';
import { removeStarted, type StartedSandbox } from './sandbox-start';

/**
 * Gives a started pooled sandbox its one-time user (the archive API, at pool-fill time, off every
 * run's path) and waits until its daemon listens on its identity subject: only then is it offered.
 * On failure it is removed.
 */
export async function bootstrapPooled(
  d: Docker,
  nc: NatsConnection,
  identity: NatsIdentity,
  started: StartedSandbox,
  timeoutMs: number,
): Promise<StartedSandbox> {
  try {
    const waiting = awaitPoolWaiting(nc, started.sandboxId, timeoutMs);
    waiting.catch(() => undefined); // awaited below
    await bindPoolBootstrap(
      started.container,
      started.sandboxId,
      await poolBootstrapCreds(identity, started.sandboxId),
    );
    await waiting;
    return started;
  } catch (e) {
    await removeStarted(d, started);
    throw e;
  }
}

/**
 * Listens for a pooled daemon's word that it waits on its identity subject (subscribed before the
 * daemon gets its one-time user, so the word cannot be missed). Resolves when it comes.
 */
export function awaitPoolWaiting(nc: NatsConnection, sandboxId: string, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new SandboxError(`pooled sandbox ${sandboxId} did not connect to NATS within ${timeoutMs} ms`));
    }, timeoutMs);
    const sub = nc.subscribe(poolWaitingSubject(sandboxId), {
      max: 1,
      callback: () => {
        clearTimeout(timer);
        resolve();
      },
    });
  });
}

/**
 * The claim's hand-over: the run's identity, as a request on the pooled sandbox's own identity
 * subject, which only its one-time user may receive. The daemon answers once it is connected as
 * the run's user (then it drops the one-time user): from here the sandbox is bound to the run.
 */
export async function handOverIdentity(nc: NatsConnection, id: RunIdentity, timeoutMs: number): Promise<void> {
  const reply = await nc
    .request(poolIdentitySubject(id.sandboxId), new TextEncoder().encode(identityJson(id)), { timeout: timeoutMs })
    .catch((e: Error) => {
      throw new SandboxError(`pooled sandbox ${id.sandboxId} did not take its run's identity: ${e.message}`);
    });
  let answer: { ok?: unknown; error?: unknown } = {};
  try {
    answer = JSON.parse(new TextDecoder().decode(reply.data)) as typeof answer;
  } catch {
    // not JSON: refused below
  }
  if (answer.ok !== true)
    throw new SandboxError(`pooled sandbox ${id.sandboxId} refused its run's identity: ${String(answer.error)}`);
}
