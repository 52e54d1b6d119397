import type Docker from 'dockerode';
import { putFiles } from './archive';
import { DAEMON_UID, IDENTITY_FILE, PROTECT_FILE, STATE_DIR } from './container';

/** What binds a started sandbox to a run (the daemon's RunIdentity, sandbox-agent/src/config.ts). */
export interface RunIdentity {
  runId: string;
  sandboxId: string;
  /** The run's NATS user (nats-auth.ts sandboxCreds): its own subjects only. */
  creds: string;
  /** The public key (PEM) the run's invocations are signed with. */
  invokeKey: string;
  /** Egress proxy settings for every command, when the run has a way out. */
  proxyEnv?: Record<string, string>;
}

const OWN = { mode: 0o600, uid: DAEMON_UID, gid: DAEMON_UID };

/**
 * Hands the daemon its run through the archive API, for an engine whose connection cannot be
 * hijacked for an attach (one reached over ssh://, through `docker system dial-stdio`; a cold start
 * elsewhere is bound on its stdin, bind-stdin.ts). Root's, mode 0600, in a 0700 directory commands
 * cannot read; the daemon deletes it once read.
 */
export async function bindRunIdentity(container: Docker.Container, id: RunIdentity): Promise<void> {
  await putIdentityFile(container, identityJson(id));
}

/** The identity as the daemon reads it (sandbox-agent/src/config.ts RunIdentity). */
export function identityJson(id: RunIdentity): string {
  return JSON.stringify({
    v: 1,
    runId: id.runId,
    sandboxId: id.sandboxId,
    creds: id.creds,
    invokeKey: id.invokeKey,
    ...(id.proxyEnv ? { proxyEnv: JSON.stringify(id.proxyEnv) } : {}),
  });
}

/**
 * A pooled sandbox's stand-in for an identity, put in when the pool starts it (off any run's
 * path): a one-time NATS user that can only wait for its claim (nats-auth.ts poolBootstrapCreds).
 * The claim then sends the run's identity over NATS (pool-handoff.ts) instead of through this
 * archive API, which costs 43–170 ms a call on Docker 20.10 here.
 */
export async function bindPoolBootstrap(container: Docker.Container, sandboxId: string, creds: string): Promise<void> {
  await putIdentityFile(container, JSON.stringify({ v: 1, pool: { sandboxId, creds } }));
}

async function putIdentityFile(container: Docker.Container, content: string): Promise<void> {
  const name = IDENTITY_FILE.slice(STATE_DIR.length + 1);
  // The marker comes after the identity in the same archive: Docker finishes an entry (its owner,
  // mode and times) before it starts the next, so a daemon that waits for the marker never reads
  // or deletes the identity while Docker is still setting it up.
  await putFiles(container, STATE_DIR, [
    { name, content, ...OWN },
    { name: `${name}${IDENTITY_READY_SUFFIX}`, content: '', ...OWN },
  ]);
}

/** The empty file whose arrival says the identity beside it is complete (sandbox-agent/src/config.ts). */
export const IDENTITY_READY_SUFFIX = '.ready';

/** Tells the daemon the workspace is complete (after the copy-in), with the paths to protect. */
export async function completeWorkspace(container: Docker.Container, protect: object): Promise<void> {
  await putFiles(container, STATE_DIR, [
    { name: PROTECT_FILE.slice(STATE_DIR.length + 1), content: JSON.stringify(protect), ...OWN },
  ]);
}
