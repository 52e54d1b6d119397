import type { KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { Id, invocationPublicKey } from '@gatehouse/shared';
import { awaitClaim, PoolBootstrap } from './pool-bootstrap';
import { ProtectList } from './protect';
import { readLines } from './stdin-lines';
import type { CommandUser } from './users';
import { waitForFile } from './wait-file';

const Env = z.object({
  GATEHOUSE_NATS_URL: z.string().min(1),
  GATEHOUSE_WORKSPACE: z.string().default('/workspace'),
  GATEHOUSE_STATE_DIR: z.string().default('/var/gatehouse'),
  /**
   * A pooled sandbox's one-time user (pool-bootstrap.ts), put in by the pool through the Docker
   * API, whose claim then brings the run's identity over NATS; or, on an engine reached over
   * ssh://, the run's identity itself. Deleted once read. Until then the
   * daemon holds no run, no run subjects and no run credentials (docs/warm-pool.md).
   */
  GATEHOUSE_IDENTITY_FILE: z.string().min(1),
  /**
   * Workspace paths to make read-only to commands (copy-in.ts). Put in last, after the repository:
   * its arrival means "workspace complete", so the daemon connects while the copy still runs.
   */
  GATEHOUSE_PROTECT_FILE: z.string().min(1),
  /**
   * Where the binding comes from. `stdin` (a cold start): the run's identity and then the protect
   * list, a line each, on the container's stdin, which only the orchestrator's attach writes (no
   * archive call on the start's path; bind-stdin.ts on the host). `file`: the identity file above
   * and the protect list's (a warm pool's sandbox, whose claim may come from another process than
   * the one that started it, and any sandbox on an engine reached over ssh://).
   */
  GATEHOUSE_BIND_VIA: z.enum(['file', 'stdin']).default('file'),
  GATEHOUSE_COMMAND_UID: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 2)
    .default(10001),
  /** How long to wait for the identity: a pooled sandbox waits for its claim (up to a day). */
  GATEHOUSE_IDENTITY_WAIT_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /** How long to wait, once bound, for the workspace to be complete. */
  GATEHOUSE_WORKSPACE_WAIT_MS: z.coerce.number().int().min(0).max(3_600_000).default(600_000),
  GATEHOUSE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
});

/** What binds a sandbox to a run: written by the orchestrator only, through the Docker API. */
export const RunIdentity = z.object({
  v: z.literal(1),
  runId: Id,
  sandboxId: Id,
  /** The run's NATS user credentials: its own subjects only. */
  creds: z.string().regex(/-+END USER NKEY SEED-+/),
  /** The public key invocations must be signed with (PEM). */
  invokeKey: z.string().min(1),
  /** The run's egress proxy settings for every command (JSON), when it has a way out. */
  proxyEnv: z.string().optional(),
});
export type RunIdentity = z.infer<typeof RunIdentity>;

export interface DaemonConfig {
  natsUrl: string;
  runId: string;
  sandboxId: string;
  workspace: string;
  stateDir: string;
  creds: string;
  heartbeatMs: number;
  invokeKey: KeyObject;
  /** The egress proxy settings (JSON) commands get, when the run has a way out. */
  proxyEnv?: string;
  /** Resolves, once the workspace is complete, to the paths to protect. */
  protect: () => Promise<ProtectList>;
  /** Who commands run as: never the daemon's own user. */
  user: CommandUser;
  /** When the identity was in hand (performance.now(): ms since the process began). */
  boundAtMs: number;
}

/** Reads the environment, then waits for the run's identity (deleted once read). */
export async function loadConfig(env: NodeJS.ProcessEnv): Promise<DaemonConfig> {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`bad daemon environment: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const e = parsed.data;
  if (e.GATEHOUSE_BIND_VIA === 'stdin') return fromStdin(e);
  // The marker arrives after the identity, in the same archive: once it exists, Docker is done with
  // the identity file (owner, mode, times), so reading and deleting it cannot race the extraction.
  const startedAt = Date.now();
  await waitForFile(`${e.GATEHOUSE_IDENTITY_FILE}.ready`, () => true, e.GATEHOUSE_IDENTITY_WAIT_MS);
  const written: unknown = JSON.parse(await fs.readFile(e.GATEHOUSE_IDENTITY_FILE, 'utf8'));
  await fs.rm(e.GATEHOUSE_IDENTITY_FILE, { force: true });
  const protectFromFile = (): Promise<ProtectList> =>
    waitForFile(e.GATEHOUSE_PROTECT_FILE, (text) => ProtectList.parse(JSON.parse(text)), e.GATEHOUSE_WORKSPACE_WAIT_MS);
  // A cold start on an engine reached over ssh:// is bound through this file (its connection cannot
  // carry an attach); a warm pool's sandbox finds its one-time user here, and its run's identity
  // comes with the claim, over NATS.
  const pooled = PoolBootstrap.safeParse(written);
  if (!pooled.success) {
    const direct = RunIdentity.safeParse(written);
    if (!direct.success) throw new Error(`the identity file holds neither a run identity nor a pool bootstrap`);
    return daemonConfig(e, direct.data, protectFromFile);
  }
  const waitMs = Math.max(0, e.GATEHOUSE_IDENTITY_WAIT_MS - (Date.now() - startedAt));
  const claim = await awaitClaim(e.GATEHOUSE_NATS_URL, pooled.data, waitMs);
  const claimed = RunIdentity.safeParse(claim.identity);
  const why = !claimed.success
    ? `not a run identity: ${claimed.error.issues[0]?.message}`
    : claimed.data.sandboxId !== pooled.data.pool.sandboxId
      ? `an identity for sandbox ${claimed.data.sandboxId}, not this one`
      : undefined;
  if (why || !claimed.success) {
    await claim.answer({ ok: false, error: why ?? 'not a run identity' });
    throw new Error(`claim refused: ${why}`);
  }
  const identity = claimed.data;
  // Bound: the claim is answered and the one-time user dropped now; the run's user connects
  // while the workspace is copied in (startDaemon), as on a cold start.
  await claim.answer({ ok: true });
  return daemonConfig(e, identity, protectFromFile);
}

/** The identity line can hold no more than this; the protect list line no more than PROTECT_MAX_BYTES. */
const IDENTITY_MAX_BYTES = 64 * 1024;
const PROTECT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A cold start's binding: the identity line, then (once the repository is in) the protect list
 * line, after which stdin is closed. Stdin closing first — the orchestrator gone — fails the start.
 */
async function fromStdin(e: z.infer<typeof Env>): Promise<DaemonConfig> {
  const lines = readLines(process.stdin);
  let identity: RunIdentity;
  try {
    const line = await lines.next('run identity', e.GATEHOUSE_IDENTITY_WAIT_MS, IDENTITY_MAX_BYTES);
    identity = parseLine(RunIdentity, line, 'run identity');
  } catch (err) {
    lines.close();
    throw err;
  }
  return daemonConfig(e, identity, async () => {
    try {
      const line = await lines.next('protect list', e.GATEHOUSE_WORKSPACE_WAIT_MS, PROTECT_MAX_BYTES);
      return parseLine(ProtectList, line, 'protect list');
    } finally {
      lines.close();
    }
  });
}

/** A line of the binding, parsed and checked; what is wrong with it is said in one sentence. */
function parseLine<T>(schema: z.ZodType<T>, line: string, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new Error(`bad ${what} on stdin: not JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`bad ${what} on stdin: ${issue?.path.join('.') || '(top)'}: ${issue?.message}`);
  }
  return parsed.data;
}

function daemonConfig(
  e: z.infer<typeof Env>,
  identity: RunIdentity,
  protect: () => Promise<ProtectList>,
): DaemonConfig {
  return {
    natsUrl: e.GATEHOUSE_NATS_URL,
    runId: identity.runId,
    sandboxId: identity.sandboxId,
    workspace: e.GATEHOUSE_WORKSPACE,
    stateDir: e.GATEHOUSE_STATE_DIR,
    heartbeatMs: e.GATEHOUSE_HEARTBEAT_MS,
    invokeKey: invocationPublicKey(identity.invokeKey),
    creds: identity.creds,
    ...(identity.proxyEnv === undefined ? {} : { proxyEnv: identity.proxyEnv }),
    protect,
    user: { uid: e.GATEHOUSE_COMMAND_UID, gid: e.GATEHOUSE_COMMAND_UID },
    boundAtMs: performance.now(),
  };
}
