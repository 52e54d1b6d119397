import path from 'node:path';
import type Docker from 'dockerode';
import type { SandboxLimits } from './container';
import type { NatsConnection } from 'nats';
import { SandboxError } from './errors';
import { ownerLabel } from './labels';
import { sandboxCreds, type NatsIdentity } from './nats-auth';
import { recordClaim, removeClaim } from './pool-claims';
import { handOverIdentity } from './pool-handoff';
import { removeStarted, type StartedSandbox } from './sandbox-start';
import type { WarmPool } from './warm-pool';

/** What a run asks the pool for: a sandbox of `image`, bound to its run with these keys. */
export interface ClaimRequest {
  image: string;
  runId: string;
  /** The public key (PEM) the run signs its invocations with; its private half stays with the run. */
  invokeKey: string;
  proxyEnv?: Record<string, string>;
  /** The process that drives the run (ownerLabel()): the reaper judges a claimed sandbox by it. */
  owner?: string;
  /** The run's state directory: a pool serves runs of its own only (where it records claims). */
  stateDir?: string;
  /** The run's sandbox limits, all of them: a pooled sandbox was started with the pool's. */
  limits?: SandboxLimits;
}

/** A claimed sandbox, bound to its run, and how long the claim took (asked to bound). */
export interface Claimed {
  started: StartedSandbox;
  /** Where the claim is recorded (pool-claims.ts): removed there with the sandbox. */
  stateDir: string;
  ms: number;
}

/** Claims a pooled sandbox for a run; undefined when none fits (the caller starts one cold). */
export type Claimer = (req: ClaimRequest) => Promise<Claimed | undefined>;

export interface PoolClaimDeps {
  pool: WarmPool;
  nc: NatsConnection;
  identity: NatsIdentity;
  docker: Docker;
  /** Where claims are recorded: the state directory the pool's sandboxes are labelled with. */
  stateDir: string;
  /** The limits the pool's sandboxes were started with. */
  limits: SandboxLimits;
  handOverTimeoutMs?: number;
  onProblem?: (message: string) => void;
}

/**
 * A claim, start to bound: take a started sandbox, record on the host which run it now belongs
 * to (before anything else: its labels cannot change), mint the run's NATS user, and hand the
 * identity over NATS (pool-handoff.ts), while the image's current id is asked beside it. A sandbox
 * that does not take it, or is of an older build, is removed, never offered again, and the run
 * starts cold.
 */
export async function claimPooled(deps: PoolClaimDeps, req: ClaimRequest): Promise<Claimed | undefined> {
  const t0 = performance.now();
  if (req.stateDir !== undefined && path.resolve(req.stateDir) !== deps.stateDir) return undefined;
  if (req.limits && !sameLimits(req.limits, deps.limits)) return undefined;
  const taken = deps.pool.claim(req.image);
  if (!taken) return undefined;
  const started = taken.entry;
  const { sandboxId } = started;
  recordClaim(deps.stateDir, {
    runId: req.runId,
    sandboxId,
    containerId: started.container.id,
    claimedAt: new Date().toISOString(),
    owner: req.owner ?? ownerLabel(),
  });
  try {
    const handedOver = handOverIdentity(
      deps.nc,
      {
        runId: req.runId,
        sandboxId,
        creds: await sandboxCreds(deps.identity, req.runId, sandboxId),
        invokeKey: req.invokeKey,
        ...(req.proxyEnv ? { proxyEnv: req.proxyEnv } : {}),
      },
      deps.handOverTimeoutMs ?? 10_000,
    );
    handedOver.catch(() => undefined); // awaited below
    // An entry of an image rebuilt since it started is not the image the run asked for.
    if (!(await taken.current)) throw new SandboxError(`sandbox ${sandboxId} is of an older build of ${req.image}`);
    await handedOver;
  } catch (e) {
    deps.onProblem?.(`warm pool: ${(e as Error).message}; it is removed and the run starts cold`);
    await removeStarted(deps.docker, started);
    removeClaim(deps.stateDir, sandboxId);
    return undefined;
  }
  return { started, stateDir: deps.stateDir, ms: Math.round((performance.now() - t0) * 10) / 10 };
}

function sameLimits(a: SandboxLimits, b: SandboxLimits): boolean {
  const keys: Array<keyof SandboxLimits> = ['memoryBytes', 'cpus', 'pids', 'tmpBytes', 'diskBytes'];
  return keys.every((k) => a[k] === b[k]);
}
