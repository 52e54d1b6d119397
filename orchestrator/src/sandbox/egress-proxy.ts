import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { parseEgressPolicy, type EgressDecision } from '@gatehouse/shared';
import { statusOf } from './docker';
import { EGRESS_ALIAS, EGRESS_PORT, egressContainerOptions } from './egress-container';
import { lineSplitter, parseEgressLine } from './egress-log';
import { ensureEgressNetwork } from './egress-network';
import { SandboxError } from './errors';
import { ensureImages } from './images';

export type { EgressDecision };

export interface EgressProxyOptions {
  runId: string;
  /** The run's internal network (createRunNetwork). */
  network: Docker.Network;
  phase: 'setup' | 'agent';
  allow: string[];
  deny?: string[];
  /** Every decision the proxy reports, parsed strictly. */
  onDecision: (d: EgressDecision) => void;
  /** Lines from the proxy that are not decisions (its stderr, unparsable stdout): reported, never trusted. */
  onProblem?: (message: string) => void;
  /** The egress image (Images.egress); default: ensureImages() finds or builds it. */
  image?: string;
  /** How long to wait for the proxy to listen (default 15 s). */
  startTimeoutMs?: number;
}

export interface EgressProxy {
  /** http://gatehouse-egress:3128, as the sandbox on the run network reaches it. */
  proxyUrl: string;
  /** The proxy's address on the run network (for clients that cannot resolve the alias). */
  address: string;
  /** Environment for commands in the sandbox so that curl, npm, pip, yarn and git use the proxy. */
  env: Record<string, string>;
  containerId: string;
  /** Stops and removes the proxy after the decisions it wrote have been delivered; idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts one phase's egress proxy for a run: a container on the outside network and on the run's
 * internal network (as `gatehouse-egress`), allowing exactly `allow` minus `deny` (docs/egress.md).
 * The lists are checked here first, every problem listed. The sandbox itself stays on the internal
 * network alone; this proxy is its only way out. One proxy per run network at a time: the previous
 * phase's must be stopped first (refused otherwise).
 */
export async function startEgressProxy(d: Docker, opts: EgressProxyOptions): Promise<EgressProxy> {
  const deny = opts.deny ?? [];
  const checked = parseEgressPolicy(opts.allow, deny);
  if ('errors' in checked) {
    throw new SandboxError(`the egress ${opts.phase} lists have errors:\n  ${checked.errors.join('\n  ')}`);
  }
  const onProblem = opts.onProblem ?? ((m: string) => process.stderr.write(`[gatehouse egress] ${m}\n`));
  const image = opts.image ?? (await ensureImages()).egress;
  const outside = await ensureEgressNetwork(d);
  const runNet = (await opts.network.inspect()) as {
    Name: string;
    IPAM?: { Config?: Array<{ Subnet?: string }> };
    Containers?: Record<string, { Name: string }>;
  };
  // Two proxies under one alias would share its DNS name: the agent phase could reach the setup list.
  const running = Object.values(runNet.Containers ?? {}).find((c) => c.Name.startsWith('gatehouse-egress-'));
  if (running) {
    throw new SandboxError(
      `the egress proxy ${running.Name} is still on ${runNet.Name}; stop the previous phase's proxy first`,
    );
  }
  const clients = (runNet.IPAM?.Config ?? []).map((c) => c.Subnet).filter((s): s is string => Boolean(s));
  if (clients.length === 0) throw new SandboxError(`the run network ${runNet.Name} has no subnet to serve`);
  const name = `gatehouse-egress-${opts.phase}-${randomBytes(6).toString('hex')}`;
  const container = await d.createContainer(
    egressContainerOptions({
      name,
      image,
      runId: opts.runId,
      phase: opts.phase,
      outsideNetwork: outside,
      allow: opts.allow,
      deny,
      clients,
    }),
  );
  const remove = (): Promise<void> =>
    container.remove({ force: true, v: true }).catch((e: unknown) => {
      if (statusOf(e) !== 404) throw e;
    });
  try {
    await opts.network.connect({ Container: container.id, EndpointConfig: { Aliases: [EGRESS_ALIAS] } });
    const output = await followOutput(d, container, opts, onProblem);
    await container.start();
    await output.listening(opts.startTimeoutMs ?? 15_000);
    const info = await container.inspect();
    const address = info.NetworkSettings.Networks[runNet.Name]?.IPAddress;
    if (!address) throw new SandboxError(`the egress proxy ${name} has no address on ${runNet.Name}`);
    const proxyUrl = `http://${EGRESS_ALIAS}:${EGRESS_PORT}`;
    let stopping: Promise<void> | undefined;
    return {
      proxyUrl,
      address,
      env: proxyEnv(proxyUrl),
      containerId: container.id,
      stop: () =>
        (stopping ??= (async () => {
          await container.stop({ t: 2 }).catch((e: unknown) => {
            if (statusOf(e) !== 304 && statusOf(e) !== 404) throw e;
          });
          await output.ended(3_000);
          await remove();
        })()),
    };
  } catch (e) {
    await remove();
    throw e;
  }
}

/** What npm, pip, yarn, curl, git and most HTTP clients read to find a proxy. */
export function proxyEnv(proxyUrl: string): Record<string, string> {
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    npm_config_proxy: proxyUrl,
    npm_config_https_proxy: proxyUrl,
    npm_config_noproxy: noProxy,
    PIP_PROXY: proxyUrl,
    YARN_HTTP_PROXY: proxyUrl,
    YARN_HTTPS_PROXY: proxyUrl,
  };
}

interface Output {
  listening(timeoutMs: number): Promise<void>;
  ended(timeoutMs: number): Promise<void>;
}

/**
 * Attaches to the container before it starts, so no line is missed: stdout lines are parsed
 * strictly (egress-log.ts), stderr lines are problems. Resolves `listening` on the proxy's start
 * line; fails it with the proxy's own words if the container ends first.
 */
async function followOutput(
  d: Docker,
  container: Docker.Container,
  opts: EgressProxyOptions,
  onProblem: (m: string) => void,
): Promise<Output> {
  const stream = (await container.attach({ stream: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const errLines: string[] = [];
  let isListening = false;
  let wake = (): void => undefined;
  const onStdout = lineSplitter(
    (line) => {
      if (line === '') return;
      const r = parseEgressLine(line, opts.phase);
      if ('error' in r) onProblem(`egress proxy (${opts.phase}) wrote ${r.error}`);
      else if ('listening' in r) {
        isListening = true;
        wake();
      } else opts.onDecision(r.decision);
    },
    (n) => onProblem(`egress proxy (${opts.phase}) wrote a line of ${n} bytes; ignored`),
  );
  const onStderr = lineSplitter(
    (line) => {
      if (line === '') return;
      if (errLines.length < 20) errLines.push(line);
      onProblem(`egress proxy (${opts.phase}): ${line}`);
    },
    () => undefined,
  );
  stdout.on('data', onStdout);
  stderr.on('data', onStderr);
  let hasEnded = false;
  const end = (): void => {
    hasEnded = true;
    wake();
  };
  stream.on('end', end);
  stream.on('close', end);
  stream.on('error', end);
  (
    d.modem as { demuxStream(s: NodeJS.ReadableStream, o: NodeJS.WritableStream, e: NodeJS.WritableStream): void }
  ).demuxStream(stream, stdout, stderr);
  const until = async (done: () => boolean, timeoutMs: number): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(100, deadline - Date.now()));
        wake = () => {
          clearTimeout(t);
          r();
        };
      });
    }
    return done();
  };
  return {
    listening: async (timeoutMs) => {
      if (await until(() => isListening || hasEnded, timeoutMs)) {
        if (isListening) return;
      }
      const said = errLines.length > 0 ? `: ${errLines.join(' / ')}` : '';
      throw new SandboxError(
        hasEnded
          ? `the egress proxy exited before it listened${said}`
          : `the egress proxy did not start listening within ${timeoutMs} ms${said}`,
      );
    },
    ended: async (timeoutMs) => {
      if (!(await until(() => hasEnded, timeoutMs))) (stream as unknown as { destroy?: () => void }).destroy?.();
    },
  };
}
