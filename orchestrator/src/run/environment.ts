import { limitsFromConfig, type EgressDecision, type Sandbox } from '../sandbox/index';
import { ensureRunImage, resolveToolchainImage } from '../sandbox/index';
import { sandboxRunner } from '../environment/command-runner';
import {
  prepareEnvironment,
  preflightCheck,
  recordDecision,
  type EgressDecisionRecord,
  type EnvironmentPorts,
  type PreparedEnvironment,
  type ReadyEnvironment,
} from '../environment/prepare-environment';
import type { LogPort } from '../tools/ports';
import type { RunEnvironment, RunHandle } from './types';

export type { ReadyEnvironment };

export function decisionRecord(d: EgressDecision): EgressDecisionRecord {
  return {
    allowed: d.event === 'egress.allowed',
    host: d.host,
    port: d.port,
    phase: d.phase,
    ...(d.address ? { address: d.address } : {}),
    ...(d.reason ? { reason: d.reason } : {}),
  };
}

/**
 * Prepares the run's environment from its project config: the run image, and setup's result when
 * there is setup (environment/prepare-environment.ts). A sub-agent gets its parent's, prepared
 * once; a run without a project config (the library used directly) gets the default sandbox.
 */
export async function prepareRunEnvironment(
  o: RunEnvironment,
  h: RunHandle,
  copy: { ignore?: (rel: string) => boolean },
): Promise<PreparedEnvironment | undefined> {
  if (o.prepared) return o.prepared;
  const config = o.projectConfig;
  if (!config) return undefined;
  const driver = o.driver;
  const limits = limitsFromConfig(config.limits);
  const secrets = o.setupEnv ?? {};
  const ports: EnvironmentPorts = {
    runImage: async (image) => {
      const tag = await ensureRunImage(await resolveToolchainImage(image), { prune: false });
      return { tag, id: await driver.imageId(tag) };
    },
    imageExists: (tag) => driver.imageExists(tag),
    startSetupSandbox: async ({ image, egress, onDecision }) => {
      const sandbox: Sandbox = await driver.createSandbox({
        runId: h.raw.runId,
        repoDir: h.repoDir,
        image,
        limits,
        copy: { exclude: [...config.copy.exclude], include: [...config.copy.include] },
        stateDir: o.stateDir,
        // Setup's workspace may hold what it wrote with the setup secrets: an orphan is never saved for resume.
        salvage: false,
        ...(copy.ignore ? { ignore: copy.ignore } : {}),
        ...(o.policy.paths ? { pathRules: o.policy.paths } : {}),
        egress: {
          phase: 'setup',
          allow: [...egress.allow],
          deny: [...egress.deny],
          onDecision: (d) => onDecision(decisionRecord(d)),
        },
      });
      const copied = sandbox.info.copiedPaths;
      return {
        run: sandboxRunner(sandbox, o.signal),
        proxyEnv: {},
        saveResult: async (tag, labels) =>
          driver.imageFromWorkspace(sandbox, {
            baseImage: image,
            tag,
            // What setup added: everything the copy did not bring in.
            keep: (rel) => !copied?.has(rel),
            labels,
            forbidden: Object.entries(secrets).map(([name, value]) => ({ name, value })),
          }),
        destroy: () => sandbox.destroy(),
      };
    },
  };
  return prepareEnvironment({
    spec: {
      image: config.image,
      setup: config.setup,
      ...(config.check ? { check: config.check } : {}),
      egress: config.egress,
      secrets,
      readScope: setupReadScope(o),
    },
    repoDir: h.repoDir,
    log: h.log,
    ports,
    redact: (text) => h.raw.redact(text),
    ...(o.onSetupOutput ? { onOutput: o.onSetupOutput } : {}),
  });
}

/**
 * What decides the files the setup sandbox's copy lets setup read: the copy's globs and the policy
 * whose path rules withhold files (by its hash; a policy with path rules but no record is marked so).
 */
export function setupReadScope(o: Pick<RunEnvironment, 'projectConfig' | 'policyRecord' | 'policy'>): string {
  const copy = o.projectConfig?.copy;
  const policy = o.policyRecord?.sha256 ?? (o.policy.paths ? 'path rules of an unrecorded policy' : null);
  return JSON.stringify({ exclude: copy?.exclude ?? [], include: copy?.include ?? [], policy });
}

/** The sandbox options a prepared environment adds: its image, its limits, the agent phase's way out. */
export function sandboxOptionsFor(o: RunEnvironment, env: ReadyEnvironment | undefined, log: LogPort) {
  const config = o.projectConfig;
  const limits = config ? limitsFromConfig(config.limits) : undefined;
  return {
    ...(env ? { image: env.image } : {}),
    ...(config ? { copy: { exclude: [...config.copy.exclude], include: [...config.copy.include] } } : {}),
    ...(limits ? { limits } : {}),
    ...(env && env.egressAgent.length > 0
      ? {
          egress: {
            phase: 'agent' as const,
            allow: [...env.egressAgent],
            deny: [...env.deny],
            onDecision: (d: EgressDecision) => recordDecision(log, decisionRecord(d)),
          },
        }
      : {}),
  };
}

/** Before the first turn of a root run (drive.ts): the programs `check` needs must be in the sandbox. */
export async function preflightRun(
  o: RunEnvironment,
  sandbox: Sandbox,
  log: LogPort,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const config = o.projectConfig;
  if (!config?.check) return { ok: true };
  return preflightCheck(sandboxRunner(sandbox, o.signal), config.check, config.image, log);
}
