import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type Docker from 'dockerode';
import { z } from 'zod';
import { Id } from '@gatehouse/shared';
import { ownerLabel } from './labels';
import type { Claimer, ClaimRequest } from './pool-claim';

/**
 * A worker's warm pool, lent to its run children (docs/warm-pool.md "From a command"). The worker
 * holds the pool; a child asks for a sandbox over a Unix socket only this user can open (its
 * folder is 0700), one connection per claim: it sends what the claim needs (its run, the public
 * half of its invocation key, its state directory), the worker claims and binds a sandbox exactly
 * as in-process (pool-claim.ts), and answers with the container's and network's ids. The run's
 * NATS credentials go from the worker to the daemon over NATS; the child never holds them, and the
 * invocation key's private half never leaves the child.
 */
export const POOL_SOCKET_ENV = 'GATEHOUSE_POOL_SOCKET';

const Request = z.object({
  image: z.string().min(1),
  runId: Id,
  invokeKey: z.string().min(1),
  proxyEnv: z.record(z.string(), z.string()).optional(),
  owner: z.string().min(1),
  stateDir: z.string().min(1),
  limits: z
    .object({
      memoryBytes: z.number(),
      cpus: z.number(),
      pids: z.number(),
      tmpBytes: z.number(),
      diskBytes: z.number().optional(),
    })
    .optional(),
});

const Answer = z.union([
  z.object({
    ok: z.literal(true),
    sandboxId: Id,
    image: z.string(),
    imageId: z.string(),
    containerId: z.string(),
    networkId: z.string(),
    stateDir: z.string(),
  }),
  z.object({ ok: z.literal(false), why: z.string() }),
]);

export interface PoolServer {
  socketPath: string;
  close(): Promise<void>;
}

/** Serves `claim` (a driver's own pool's) to the children of this process, for runs of `stateDir`. */
export async function servePool(
  claim: Claimer,
  stateDir: string,
  onRefusal: (why: string) => void = () => undefined,
): Promise<PoolServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-pool-'));
  const socketPath = path.join(dir, 'pool.sock');
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    const lines = createInterface({ input: socket });
    lines.once('line', (line) => {
      lines.close();
      void answer(line).then((a) => {
        if (!a.ok) onRefusal(a.why);
        socket.end(`${JSON.stringify(a)}\n`);
      });
    });
  });
  const answer = async (line: string): Promise<z.infer<typeof Answer>> => {
    let req: z.infer<typeof Request>;
    try {
      req = Request.parse(JSON.parse(line));
    } catch (e) {
      return { ok: false, why: `not a claim: ${(e as Error).message.slice(0, 200)}` };
    }
    if (path.resolve(req.stateDir) !== path.resolve(stateDir))
      return { ok: false, why: `the pool is for runs of ${stateDir}` };
    const { stateDir: _s, ...claimReq } = req;
    const claimed = await claim(claimReq as ClaimRequest).catch(() => undefined);
    if (!claimed) return { ok: false, why: `no pooled sandbox of ${req.image} with the run's limits is ready` };
    const s = claimed.started;
    return {
      ok: true,
      sandboxId: s.sandboxId,
      image: s.image,
      imageId: s.imageId,
      containerId: s.container.id,
      networkId: s.network.id,
      stateDir: claimed.stateDir,
    };
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The claimer of a worker's run child: asks the worker's pool (at `socketPath`). No answer within
 * `timeoutMs`, a refusal, or no worker: undefined, and the run starts cold.
 */
export function remoteClaimer(d: Docker, socketPath: string, stateDir: () => string, timeoutMs = 15_000): Claimer {
  return async (req) => {
    const t0 = performance.now();
    const line = await new Promise<string | undefined>((resolve) => {
      const socket = net.createConnection(socketPath);
      const timer = setTimeout(() => socket.destroy(), timeoutMs);
      let got: string | undefined;
      createInterface({ input: socket }).once('line', (l) => (got = l));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(got);
      });
      // The claim names this process as its run's: the reaper judges the sandbox by its life.
      const ask = { ...req, owner: req.owner ?? ownerLabel(), stateDir: req.stateDir ?? stateDir() };
      socket.write(`${JSON.stringify(ask)}\n`);
    });
    let a: z.infer<typeof Answer> | undefined;
    try {
      a = line === undefined ? undefined : Answer.parse(JSON.parse(line));
    } catch {
      a = undefined;
    }
    if (!a?.ok) return undefined;
    return {
      started: {
        sandboxId: a.sandboxId,
        image: a.image,
        imageId: a.imageId,
        container: d.getContainer(a.containerId),
        network: d.getNetwork(a.networkId),
      },
      stateDir: a.stateDir,
      ms: Math.round((performance.now() - t0) * 10) / 10,
    };
  };
}
