import type Docker from 'dockerode';
import { LABEL, labels } from './labels';

/** The port the proxy listens on, on every network it is on. */
export const EGRESS_PORT = 3128;
/** Its name on each run network: the sandbox's HTTP_PROXY points here. */
export const EGRESS_ALIAS = 'gatehouse-egress';
/** The proxy's unprivileged user (images/egress/Dockerfile). */
export const EGRESS_UID = 10003;

export interface EgressContainerSpec {
  name: string;
  image: string;
  runId: string;
  phase: 'setup' | 'agent';
  /** The outside network it starts on; the run network is connected next, with EGRESS_ALIAS. */
  outsideNetwork: string;
  allow: readonly string[];
  deny: readonly string[];
  /** The run network's subnets: only sandboxes there may use the proxy. */
  clients: readonly string[];
}

/**
 * The proxy's container: an unprivileged user with no capabilities, no privilege gain, a read-only
 * root and nothing mounted, small memory, CPU and pids limits. Its configuration is its environment,
 * fixed at creation: a phase's proxy is replaced for the next phase, never told anything new.
 */
export function egressContainerOptions(spec: EgressContainerSpec): Docker.ContainerCreateOptions {
  return {
    name: spec.name,
    Image: spec.image,
    User: `${EGRESS_UID}:${EGRESS_UID}`,
    Env: [
      `GATEHOUSE_EGRESS_ALLOW=${JSON.stringify(spec.allow)}`,
      `GATEHOUSE_EGRESS_DENY=${JSON.stringify(spec.deny)}`,
      `GATEHOUSE_EGRESS_PHASE=${spec.phase}`,
      `GATEHOUSE_EGRESS_PORT=${EGRESS_PORT}`,
      `GATEHOUSE_EGRESS_SELF=${JSON.stringify([EGRESS_ALIAS, spec.name])}`,
      `GATEHOUSE_EGRESS_CLIENTS=${JSON.stringify(spec.clients)}`,
    ],
    Labels: labels('egress-proxy', { [LABEL.run]: spec.runId, 'gatehouse.egress.phase': spec.phase }),
    AttachStdout: true,
    AttachStderr: true,
    NetworkingConfig: { EndpointsConfig: { [spec.outsideNetwork]: {} } },
    HostConfig: {
      NetworkMode: spec.outsideNetwork,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      ReadonlyRootfs: true,
      Memory: 128 * 1024 * 1024,
      MemorySwap: 128 * 1024 * 1024,
      NanoCpus: 500_000_000,
      PidsLimit: 32,
      Ulimits: [{ Name: 'nofile', Soft: 2048, Hard: 2048 }],
      Init: true,
      IpcMode: 'private',
      // Decisions are read from the attached stream; the log file only needs to stay small.
      LogConfig: { Type: 'json-file', Config: { 'max-size': '5m', 'max-file': '1' } },
      AutoRemove: false,
    },
  };
}
