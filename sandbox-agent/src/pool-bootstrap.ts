import { connect, type Msg } from 'nats';
import { z } from 'zod';
import { Id, poolIdentitySubject, poolWaitingSubject } from '@gatehouse/shared';
import { log } from './log';
import { credsAuthenticator } from './nats-creds';

/**
 * What a warm pool puts into a pooled sandbox when it starts it, instead of a run's identity: a
 * one-time NATS user that may only receive on its own identity subject and answer once. No run,
 * no run credentials: the claim sends those over that subject (docs/warm-pool.md).
 */
export const PoolBootstrap = z.object({
  v: z.literal(1),
  pool: z.object({
    sandboxId: Id,
    creds: z.string().regex(/-+END USER NKEY SEED-+/),
  }),
});
export type PoolBootstrap = z.infer<typeof PoolBootstrap>;

export interface Claimed {
  /** The run's identity as the claim sent it (unparsed JSON: the caller validates it). */
  identity: unknown;
  /** Answers the claim (bound, or why not) and drops the one-time user's connection. */
  answer(outcome: { ok: true } | { ok: false; error: string }): Promise<void>;
}

/**
 * Connects as the one-time user and waits (up to `waitMs`) for the claim's request on this
 * sandbox's identity subject. Only the orchestrator may publish there; the one-time user can
 * neither subscribe elsewhere nor publish, so what it holds is worth nothing once answered.
 */
export async function awaitClaim(natsUrl: string, b: PoolBootstrap, waitMs: number): Promise<Claimed> {
  const nc = await connect({
    servers: natsUrl,
    name: `gatehouse-pool-${b.pool.sandboxId}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    authenticator: credsAuthenticator(b.pool.creds),
  });
  try {
    let timer: NodeJS.Timeout | undefined;
    const claimed = new Promise<Msg>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no claim within ${waitMs} ms`)), waitMs);
      nc.subscribe(poolIdentitySubject(b.pool.sandboxId), {
        max: 1,
        callback: (err, m) => {
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(m);
        },
      });
    });
    claimed.catch(() => undefined); // awaited below
    // The subscription is in place at the server before the pool hears this sandbox is waiting.
    await nc.flush();
    nc.publish(poolWaitingSubject(b.pool.sandboxId));
    const msg = await claimed;
    let identity: unknown;
    try {
      identity = JSON.parse(new TextDecoder().decode(msg.data));
    } catch {
      identity = undefined;
    }
    return {
      identity,
      answer: async (outcome) => {
        if (msg.reply) msg.respond(new TextEncoder().encode(JSON.stringify(outcome)));
        await nc.drain().catch((e: Error) => log('warn', 'closing the pool connection failed', { err: e.message }));
      },
    };
  } catch (e) {
    await nc.close().catch(() => undefined);
    throw e;
  }
}
