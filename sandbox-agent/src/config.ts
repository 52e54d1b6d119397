import type { KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { Id, invocationPublicKey } from '@gatehouse/shared';
import { ProtectList } from './protect';
import type { CommandUser } from './users';

const Env = z.object({
  GATEHOUSE_NATS_URL: z.string().min(1),
  GATEHOUSE_RUN_ID: Id,
  GATEHOUSE_SANDBOX_ID: Id,
  GATEHOUSE_WORKSPACE: z.string().default('/workspace'),
  GATEHOUSE_STATE_DIR: z.string().default('/var/gatehouse'),
  /**
   * A NATS credentials file; deleted once read so commands in the sandbox cannot pick it up. The
   * orchestrator puts it in last, after the repository, so its arrival also means "workspace
   * complete": the daemon boots while the copy is still running and waits for it.
   */
  GATEHOUSE_NATS_CREDS_FILE: z.string().optional(),
  /** The public key invocations must be signed with; written beside the credentials. */
  GATEHOUSE_INVOKE_KEY_FILE: z.string().min(1),
  /** Workspace paths to make read-only to commands (copy-in.ts); written beside the credentials. */
  GATEHOUSE_PROTECT_FILE: z.string().optional(),
  GATEHOUSE_COMMAND_UID: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 2)
    .default(10001),
  GATEHOUSE_CREDS_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(60_000),
  GATEHOUSE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
});

export interface DaemonConfig {
  natsUrl: string;
  runId: string;
  sandboxId: string;
  workspace: string;
  stateDir: string;
  creds?: string;
  heartbeatMs: number;
  invokeKey: KeyObject;
  protect: ProtectList;
  /** Who commands run as: never the daemon's own user. */
  user: CommandUser;
}

export async function loadConfig(env: NodeJS.ProcessEnv): Promise<DaemonConfig> {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`bad daemon environment: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const e = parsed.data;
  let creds: string | undefined;
  if (e.GATEHOUSE_NATS_CREDS_FILE) {
    creds = await waitForCreds(e.GATEHOUSE_NATS_CREDS_FILE, e.GATEHOUSE_CREDS_WAIT_MS);
    await fs.rm(e.GATEHOUSE_NATS_CREDS_FILE, { force: true });
  }
  // Both are put in before the credentials, in the same archive: they are complete by now.
  const invokeKey = invocationPublicKey(await fs.readFile(e.GATEHOUSE_INVOKE_KEY_FILE, 'utf8'));
  const protect = e.GATEHOUSE_PROTECT_FILE
    ? ProtectList.parse(JSON.parse(await fs.readFile(e.GATEHOUSE_PROTECT_FILE, 'utf8')))
    : { entries: [], dirs: [] };
  return {
    natsUrl: e.GATEHOUSE_NATS_URL,
    runId: e.GATEHOUSE_RUN_ID,
    sandboxId: e.GATEHOUSE_SANDBOX_ID,
    workspace: e.GATEHOUSE_WORKSPACE,
    stateDir: e.GATEHOUSE_STATE_DIR,
    heartbeatMs: e.GATEHOUSE_HEARTBEAT_MS,
    invokeKey,
    protect,
    user: { uid: e.GATEHOUSE_COMMAND_UID, gid: e.GATEHOUSE_COMMAND_UID },
    ...(creds === undefined ? {} : { creds }),
  };
}

/** A creds file ends with its seed's END line; until then it is still being written. */
const COMPLETE = /-+END USER NKEY SEED-+/;

async function waitForCreds(file: string, waitMs: number): Promise<string> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    const text = await fs.readFile(file, 'utf8').catch(() => undefined);
    if (text !== undefined && COMPLETE.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`no complete credentials at ${file} after ${waitMs} ms`);
    await new Promise((r) => setTimeout(r, attempt < 200 ? 5 : 50));
  }
}
