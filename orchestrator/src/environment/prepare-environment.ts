import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { OutputChunk } from '@gatehouse/shared';
import type { LogPort } from '../tools/ports';
import type { CommandRunner } from './command-runner';
import { lockfileHashes } from './lockfiles';
import { checkPrograms, missingProgramsMessage } from './preflight';
import { setupCacheImage, setupCacheKey } from './setup-key';

/** What a run's environment is made of: from the project config, the flags and the environment. */
export interface EnvironmentSpec {
  /** The toolchain image as given: `preset:node`, `preset:python` or an image reference. */
  image: string;
  setup: readonly string[];
  check?: string;
  egress: { setup: readonly string[]; agent: readonly string[]; deny: readonly string[] };
  /** Values for setup only (`--setup-env NAME`), by name. */
  secrets: Readonly<Record<string, string>>;
  /** What decides the files setup may read (copy globs, the policy's withheld paths): part of the cache key. */
  readScope: string;
}

export interface EgressDecisionRecord {
  allowed: boolean;
  host: string;
  port: number;
  phase: 'setup' | 'agent';
  address?: string;
  reason?: string;
}

/** A sandbox to run setup in: started from the run image, its only way out the setup allowlist. */
export interface SetupSandbox {
  run: CommandRunner;
  /** The proxy settings its commands need (HTTP_PROXY and the package managers' own). */
  proxyEnv: Readonly<Record<string, string>>;
  /** Builds the cache image from what setup added to the workspace; fails if a secret is in it. */
  saveResult(tag: string, labels: Record<string, string>): Promise<{ roots: string[] }>;
  destroy(): Promise<void>;
}

/** The Docker side, passed in so the steps below read as the plan and stay testable. */
export interface EnvironmentPorts {
  runImage(image: string): Promise<{ tag: string; id: string }>;
  imageExists(tag: string): Promise<boolean>;
  startSetupSandbox(o: {
    image: string;
    egress: { allow: readonly string[]; deny: readonly string[] };
    onDecision: (d: EgressDecisionRecord) => void;
  }): Promise<SetupSandbox>;
}

export type PreparedEnvironment =
  | {
      kind: 'ready';
      /** The image every sandbox of the run starts from. */
      image: string;
      runImage: string;
      cacheHit: boolean;
      egressAgent: readonly string[];
      deny: readonly string[];
    }
  | { kind: 'failed'; stage: 'image' | 'preflight' | 'command' | 'cache'; reason: string };

/** The environment a run's sandboxes start in, once prepared (sub-agents and resumes reuse it). */
export type ReadyEnvironment = Extract<PreparedEnvironment, { kind: 'ready' }>;

export interface PrepareOptions {
  spec: EnvironmentSpec;
  repoDir: string;
  log: LogPort;
  ports: EnvironmentPorts;
  /** Setup's output as it arrives, redacted (the live trace). */
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  redact: (text: string) => string;
}

/** One setup command may run this long. */
export const SETUP_COMMAND_TIMEOUT_MS = 15 * 60_000;
/** Of each command's output the log keeps this much of the head and of the tail. */
const LOGGED_OUTPUT_HALF = 16 * 1024;

/**
 * Prepares the image a run's sandboxes start from, before the model's first turn:
 *  1. derive the run image from the toolchain image (the daemon and its runtime added);
 *  2. without setup commands, that is the environment;
 *  3. key the setup by image, commands, allowlist, secret names and lockfiles; a cached result ends here;
 *  4. start a setup sandbox whose only way out is the setup allowlist, and check that setup's programs exist;
 *  5. run the commands in order as the command user, output live and in the log, secrets in their
 *     environment only; the first failure ends the run;
 *  6. keep what setup added to the workspace as the cache image (refused if a secret is in it);
 *  7. remove the setup sandbox whatever happened: its processes, its secrets and its proxy go with it.
 * The agent's sandbox is then started from the result, so a run with a cache hit and one without see
 * the same workspace, and nothing setup started or was given survives into the agent's phase.
 */
export async function prepareEnvironment(o: PrepareOptions): Promise<PreparedEnvironment> {
  const { spec, log, ports } = o;
  const fail = (
    stage: 'image' | 'preflight' | 'command' | 'cache',
    reason: string,
    extra = {},
  ): PreparedEnvironment => {
    log.append('setup.failed', 'runtime', { stage, reason: o.redact(reason), ...extra });
    return { kind: 'failed', stage, reason: o.redact(reason) };
  };
  const ready = (image: string, runImage: string, cacheHit: boolean): PreparedEnvironment => ({
    kind: 'ready',
    image,
    runImage,
    cacheHit,
    egressAgent: spec.egress.agent,
    deny: spec.egress.deny,
  });

  // 1.
  let runImage: { tag: string; id: string };
  try {
    runImage = await ports.runImage(spec.image);
  } catch (e) {
    return fail('image', `the sandbox image ${spec.image} could not be prepared: ${(e as Error).message}`);
  }
  // 2.
  if (spec.setup.length === 0) return ready(runImage.tag, runImage.tag, false);
  // 3.
  const started = performance.now();
  const secretNames = Object.keys(spec.secrets).sort();
  const cacheKey = setupCacheKey({
    runImageId: runImage.id,
    commands: spec.setup,
    egress: spec.egress.setup,
    secretNames,
    lockfiles: await lockfileHashes(o.repoDir),
    readScope: spec.readScope,
    repository: realRepository(o.repoDir),
  });
  const cacheImage = setupCacheImage(cacheKey);
  log.append('setup.started', 'runtime', {
    image: spec.image,
    runImage: runImage.tag,
    commands: [...spec.setup],
    cacheKey,
    egress: [...spec.egress.setup],
    secrets: secretNames,
  });
  const completed = (cacheHit: boolean, cachedPaths?: number): void => {
    log.append('setup.completed', 'runtime', {
      cacheHit,
      cacheKey,
      image: cacheImage,
      durationMs: Math.round(performance.now() - started),
      ...(cachedPaths === undefined ? {} : { cachedPaths }),
    });
  };
  if (await ports.imageExists(cacheImage)) {
    completed(true);
    return ready(cacheImage, runImage.tag, true);
  }
  // 4.
  let sandbox: SetupSandbox;
  try {
    sandbox = await ports.startSetupSandbox({
      image: runImage.tag,
      egress: { allow: spec.egress.setup, deny: spec.egress.deny },
      onDecision: (d) => recordDecision(log, d),
    });
  } catch (e) {
    return fail('image', `the setup sandbox did not start: ${(e as Error).message}`);
  }
  try {
    const programs = await checkPrograms(
      sandbox.run,
      spec.setup.map((command) => ({ command, for: 'setup' as const })),
    );
    log.append('preflight.completed', 'runtime', { programs });
    const missing = programs.filter((p) => !p.found);
    if (missing.length > 0) return fail('preflight', missingProgramsMessage(missing, spec.image));
    // 5.
    const env = { ...sandbox.proxyEnv, ...spec.secrets };
    for (const [index, command] of spec.setup.entries()) {
      const live = o.onOutput ? redactedLines(o.redact, o.onOutput) : undefined;
      const r = await sandbox.run(command, {
        purpose: 'setup',
        timeoutMs: SETUP_COMMAND_TIMEOUT_MS,
        env,
        ...(live ? { onOutput: live.write } : {}),
      });
      live?.end();
      const output = o.redact(r.output);
      const kept = headAndTail(output);
      log.append('setup.command', 'runtime', {
        index,
        command,
        status: r.status,
        exitCode: r.exitCode,
        durationMs: r.durationMs,
        output: kept.text,
        bytes: Buffer.byteLength(r.output),
        truncated: r.truncated || kept.cut,
      });
      if (r.status !== 'ok' || r.exitCode !== 0) {
        const how = r.exitCode === null ? r.status : `exit ${r.exitCode}`;
        const last = lastLines(output, 5);
        return fail('command', `setup command ${index + 1} (${command}) failed (${how})${last ? `:\n${last}` : ''}`, {
          command,
          exitCode: r.exitCode,
        });
      }
    }
    // 6.
    let saved: { roots: string[] };
    try {
      saved = await sandbox.saveResult(cacheImage, { 'gatehouse.setup-key': cacheKey });
    } catch (e) {
      return fail('cache', (e as Error).message);
    }
    completed(false, saved.roots.length);
    return ready(cacheImage, runImage.tag, false);
  } finally {
    // 7.
    await sandbox.destroy().catch(() => undefined);
  }
}

/** Checks the programs the check command needs in the agent's sandbox (after setup). */
export async function preflightCheck(
  run: CommandRunner,
  check: string | undefined,
  image: string,
  log: LogPort,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (!check) return { ok: true };
  const programs = await checkPrograms(run, [{ command: check, for: 'check' }]);
  log.append('preflight.completed', 'runtime', { programs });
  const missing = programs.filter((p) => !p.found);
  if (missing.length === 0) return { ok: true };
  const reason = missingProgramsMessage(missing, image);
  log.append('setup.failed', 'runtime', { stage: 'preflight', reason });
  return { ok: false, reason };
}

export function recordDecision(log: LogPort, d: EgressDecisionRecord): void {
  const base = { host: d.host, port: d.port, phase: d.phase, ...(d.address ? { address: d.address } : {}) };
  if (d.allowed) log.append('egress.allowed', 'sandbox', base);
  else log.append('egress.denied', 'sandbox', { ...base, reason: d.reason ?? 'not on the allowlist' });
}

/** A line longer than this is shown in pieces (a secret cut at such a piece's end is not caught). */
const LIVE_LINE_MAX = 64 * 1024;

/**
 * Live output, redacted a whole line at a time: chunks end anywhere, and a secret cut in two by a
 * chunk boundary would pass a per-chunk redaction (`s3cr` + `3t-value`).
 */
function redactedLines(
  redact: (text: string) => string,
  emit: (text: string, stream: 'stdout' | 'stderr') => void,
): { write: (c: OutputChunk) => void; end: () => void } {
  const pending = { stdout: '', stderr: '' };
  return {
    write: (c) => {
      const text = pending[c.stream] + c.data;
      const cut = text.length > LIVE_LINE_MAX ? text.length : text.lastIndexOf('\n') + 1;
      pending[c.stream] = text.slice(cut);
      if (cut > 0) emit(redact(text.slice(0, cut)), c.stream);
    },
    end: () => {
      for (const stream of ['stdout', 'stderr'] as const) {
        // The command's last line, unterminated: ended here so a printer that waits for lines shows it.
        if (pending[stream] !== '') emit(`${redact(pending[stream])}\n`, stream);
        pending[stream] = '';
      }
    },
  };
}

function headAndTail(text: string): { text: string; cut: boolean } {
  if (text.length <= 2 * LOGGED_OUTPUT_HALF) return { text, cut: false };
  const omitted = text.length - 2 * LOGGED_OUTPUT_HALF;
  return {
    text:
      `${text.slice(0, LOGGED_OUTPUT_HALF)}\n[... ${omitted} characters omitted ...]\n` +
      text.slice(-LOGGED_OUTPUT_HALF),
    cut: true,
  };
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

function realRepository(repoDir: string): string {
  try {
    return realpathSync(repoDir);
  } catch {
    return path.resolve(repoDir);
  }
}
