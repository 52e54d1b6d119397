import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  actionHash,
  decodeMessage,
  DEFAULT_OUTPUT_CAP,
  InvocationResult,
  newId,
  sandboxSubjects,
  type PrimitiveInput,
  type PrimitiveName,
} from '@gatehouse/shared';
import { resolveRunPolicy, runtimeApproval, SandboxDriver, type Sandbox } from '@gatehouse/orchestrator';

/**
 * Shared by the end-to-end tests: one real driver per test file (real Docker, real NATS), and
 * helpers to talk to a sandbox's daemon directly over NATS, bypassing the client's own checks.
 */
export async function startDriver(opts: ConstructorParameters<typeof Object>[0] = {}): Promise<SandboxDriver> {
  // No reaping at start: test files run in parallel, and one file's reaper would take (and save)
  // another's deliberately crashed runs; the tests that reap do it for their own runs.
  // Lost after ten missed heartbeats, the product's own ratio (driver.ts). At four, a sandbox whose
  // one CPU ran thirty forking processes went 2.1 s without a heartbeat in two fresh-clone CIs
  // (redteam-survivor, redteam-root-write-race), and was called lost while its daemon was alive.
  return SandboxDriver.start({ heartbeatMs: 500, lostAfterMs: 5000, reap: false, ...(opts as object) });
}

/** A small git repository on the host, committed, for copying into sandboxes. */
export function makeRepo(
  files: Record<string, string> = { 'README.md': '# fixture\n', 'src/a.ts': 'export const a = 1;\n' },
): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-repo-'));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=test@gatehouse', '-c', 'user.name=test', 'commit', '-qm', 'fixture');
  return dir;
}

/**
 * A sandbox made the way a run makes it under a policy: the policy written to `policyFile` (beside
 * the repository unless given), loaded as `--policy` would load it, and its path rules handed to
 * the copy (withheld and locked paths).
 */
export async function sandboxUnderPolicy(
  driver: SandboxDriver,
  repoDir: string,
  policy: object,
  policyFile = path.join(path.dirname(repoDir), `${path.basename(repoDir)}-policy.json`),
): Promise<Sandbox> {
  mkdirSync(path.dirname(policyFile), { recursive: true });
  writeFileSync(policyFile, JSON.stringify(policy));
  const loaded = (await resolveRunPolicy({ policyFile, repoDir })).policy;
  return driver.createSandbox({ runId: newId('run'), repoDir, ...(loaded.paths ? { pathRules: loaded.paths } : {}) });
}

/** Invoke through the client with a runtime approval for exactly this action. */
export function run<P extends PrimitiveName>(
  sandbox: Sandbox,
  primitive: P,
  input: PrimitiveInput<P>,
  opts: {
    timeoutMs?: number;
    outputCap?: number;
    invocationId?: string;
    signal?: AbortSignal;
    onOutput?: (c: { stream: string; data: string }) => void;
  } = {},
) {
  return sandbox.invoke(primitive, input, { approval: runtimeApproval(primitive, input, 'test'), ...opts });
}

/** A well-formed invocation message, as a plain object a test can then corrupt. */
export function invocation(
  sandbox: Sandbox,
  primitive: PrimitiveName,
  input: unknown,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const invocationId = newId('inv');
  return {
    v: 1,
    invocationId,
    intentId: invocationId,
    runId: sandbox.runId,
    sandboxId: sandbox.sandboxId,
    primitive,
    input,
    approval: { id: 'test', actionHash: actionHash({ name: primitive, input }), by: 'runtime' },
    timeoutMs: 10_000,
    outputCap: DEFAULT_OUTPUT_CAP,
    ...extra,
  };
}

/**
 * Sends raw bytes (or an object as JSON) straight to the daemon and decodes its reply. An object is
 * signed with the sandbox's key as it is (after whatever corruption the test made), so the daemon's
 * other checks are reached; `unsigned` sends it as given.
 */
export async function sendRaw(
  driver: SandboxDriver,
  sandbox: Sandbox,
  message: unknown,
  opts: { unsigned?: boolean } = {},
): Promise<InvocationResult> {
  const signed =
    typeof message === 'object' &&
    message !== null &&
    !(message instanceof Uint8Array) &&
    !Array.isArray(message) &&
    !opts.unsigned
      ? { ...message, signature: sandbox.sign(message) }
      : message;
  const bytes =
    signed instanceof Uint8Array
      ? signed
      : new TextEncoder().encode(typeof signed === 'string' ? signed : JSON.stringify(signed));
  const reply = await driver.nc.request(sandboxSubjects(sandbox.runId, sandbox.sandboxId).invoke, bytes, {
    timeout: 20_000,
  });
  const decoded = decodeMessage(InvocationResult, reply.data);
  if (!decoded.ok) throw new Error(`daemon reply failed the result schema: ${decoded.error}`);
  return decoded.value;
}

/**
 * Runs a command in the sandbox as root through `docker exec`, around the daemon: for tests that
 * must look at what commands cannot (the daemon's state directory, file owners).
 */
export async function rootExec(
  driver: SandboxDriver,
  sandbox: Sandbox,
  cmd: string[],
): Promise<{ exitCode: number; output: string }> {
  const exec = await driver.docker
    .getContainer(sandbox.info.containerId)
    .exec({ Cmd: cmd, User: '0', AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve());
    stream.on('error', reject);
  });
  // The attached stream is multiplexed: 8-byte frame headers before each chunk.
  const raw = Buffer.concat(chunks);
  const parts: Buffer[] = [];
  for (let i = 0; i + 8 <= raw.length;) {
    const size = raw.readUInt32BE(i + 4);
    parts.push(raw.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  const { ExitCode } = await exec.inspect();
  return { exitCode: ExitCode ?? -1, output: Buffer.concat(parts).toString('utf8') };
}

/** Runs a shell command in the sandbox and returns its output; fails the test if it does not exit 0. */
export async function sh(sandbox: Sandbox, command: string, timeoutMs = 20_000): Promise<string> {
  const r = await run(sandbox, 'exec', { command }, { timeoutMs });
  if (r.status !== 'ok') throw new Error(`command failed (${r.status}, exit ${r.exitCode}): ${command}\n${r.output}`);
  return r.output;
}

export { runtimeApproval };
