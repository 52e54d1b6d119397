import { stat } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import { decodeMessage, Heartbeat, invocationKeys, newId, sandboxSubjects } from '@gatehouse/shared';
import { DEFAULT_LIMITS, type SandboxLimits } from './container';
import { planCopy, sendCopy, type CopyReport } from './copy-in';
import { assertDockerReachable, docker, dockerHost } from './docker';
export type { CreateSandboxOptions, SandboxBackend } from './sandbox-backend';
import { resolveStateDir } from '../events/paths';
import { SandboxError } from './errors';
import { ensureImages, type BaseChoice, type Images } from './images';
import { LABEL } from './labels';
import { sandboxCreds } from './nats-auth';
import { connectOrchestrator, ensureNatsServer, type NatsEndpoint } from './nats-server';
import { fasterRuntime } from './oci-runtime';
import { removeClaim } from './pool-claims';
import { claimPooled, type Claimer } from './pool-claim';
import { POOL_SOCKET_ENV, remoteClaimer } from './pool-link';
import { bindRunIdentity, completeWorkspace } from './run-identity';
import { NetworkPool } from './network-pool';
import { removeStarted, type StartedSandbox } from './sandbox-start';
import { SandboxStarter } from './sandbox-starter';
import { WarmPool, type WarmPoolOptions } from './warm-pool';
import { EGRESS_ALIAS, EGRESS_PORT } from './egress-container';
import { proxyEnv, startEgressProxy, type EgressProxy } from './egress-proxy';
import { HeartbeatClock } from './heartbeat-clock';
import { raceReady } from './ready-race';
import { reapOrphans, type ReapReport } from './reaper';
import { Sandbox } from './sandbox';
import type { CreateSandboxOptions, SandboxBackend } from './sandbox-backend';
import { imageExists } from './docker';
import { imageFromWorkspace, type WorkspaceImageOptions, type WorkspaceImageReport } from './workspace-image';
import { watchContainerDeaths } from './watch';

export interface DriverOptions {
  log?: Logger;
  imageBase?: BaseChoice;
  /** How often daemons send heartbeats. */
  heartbeatMs?: number;
  /** A sandbox with no heartbeat for this long is reported lost. */
  lostAfterMs?: number;
  readyTimeoutMs?: number;
  limits?: Partial<SandboxLimits>;
  /** Reap orphans of dead orchestrators at start-up (default true). */
  reap?: boolean;
  /**
   * Keep sandboxes started ahead of runs (docs/warm-pool.md): createSandbox claims one when it can
   * (same image, the driver's limits, no sandbox id or salvage choice of its own), else starts cold.
   */
  warmPool?: WarmPoolOptions;
  /**
   * Run networks made ahead (NATS attached) for cold starts, each used by one sandbox only
   * (network-pool.ts), refilled as they are taken. Unset: one, for the first sandbox, not refilled;
   * 0: each network is made at its sandbox's start.
   */
  networks?: number;
  /**
   * The state directory pooled sandboxes are labelled with (where claims are recorded and orphans
   * saved); a run of another state directory starts cold. Default: resolveStateDir().
   */
  stateDir?: string;
}

const EMPTY_COPY: CopyReport = {
  withheld: [],
  protect: { entries: [], dirs: [] },
  freshRepository: false,
  skipped: [],
  notices: [],
  copied: 0,
  copiedPaths: new Set(),
};

/**
 * Owns the Docker side of sandboxes: images, the NATS server, run networks and containers, their
 * start-up, their loss, and their removal. One driver per orchestrator process.
 */
export class SandboxDriver implements SandboxBackend {
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly watchdog: NodeJS.Timeout;
  private readonly heartbeatClock: HeartbeatClock;
  private stopWatching: (() => void) | undefined;
  /** Sandboxes started ahead of runs, when the driver was given warmPool. */
  pool: WarmPool | undefined;
  /** Claims a pooled sandbox for a run: this driver's own pool's, or a worker's (pool-link.ts). */
  claimer: Claimer | undefined;
  private starter!: SandboxStarter;
  private networks: NetworkPool | undefined;
  readonly heartbeatMs: number;
  readonly lostAfterMs: number;

  private constructor(
    readonly docker: Docker,
    readonly images: Images,
    readonly nats: NatsEndpoint,
    readonly nc: NatsConnection,
    readonly reaped: ReapReport | undefined,
    private readonly opts: DriverOptions,
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? 1000;
    // Docker's die event reports a dead container at once; silence only has to catch a hung daemon or a cut
    // connection, so it is judged generously: a busy host can starve a live container for seconds.
    this.lostAfterMs = opts.lostAfterMs ?? Math.max(10_000, 10 * this.heartbeatMs);
    const tickMs = Math.min(250, this.heartbeatMs);
    this.heartbeatClock = new HeartbeatClock(tickMs);
    this.watchdog = setInterval(() => this.checkHeartbeats(), tickMs);
    this.watchdog.unref();
  }

  static async start(opts: DriverOptions = {}): Promise<SandboxDriver> {
    const d = docker();
    await assertDockerReachable(d);
    const log = opts.log;
    const reaped = opts.reap === false ? undefined : await reapOrphans(d, false, { ownStateDirOnly: true });
    if (reaped && reaped.containers.length + reaped.networks.length > 0)
      log?.info({ reaped }, 'reaped orphaned sandboxes');
    const images = await ensureImages({
      ...(opts.imageBase ? { base: opts.imageBase } : {}),
      log: (m) => log?.info(m),
    });
    const nats = await ensureNatsServer(images.nats);
    const nc = await connectOrchestrator(nats.url, nats.identity);
    const driver = new SandboxDriver(d, images, nats, nc, reaped, opts);
    // Unasked, one network for the first sandbox, made while the driver starts, and no refill: most
    // processes run one run; a driver that starts many (a bench, a pool) asks for `networks`.
    const networks = opts.networks ?? 1;
    driver.networks =
      networks > 0
        ? new NetworkPool(d, nats.container, images.nats, networks, (m) => log?.warn(m), opts.networks !== undefined)
        : undefined;
    void driver.networks?.fill();
    driver.starter = new SandboxStarter(d, nats, nc, {
      // docker-modem's ssh transport (docker system dial-stdio over ssh2) does not carry an attach.
      bindOverStdin: dockerHost().kind !== 'ssh',
      heartbeatMs: driver.heartbeatMs,
      readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
      ...(driver.networks ? { networks: driver.networks } : {}),
      ...(log ? { log } : {}),
    });
    const runtime = await fasterRuntime(d);
    if (runtime) driver.starter.useRuntime(runtime);
    driver.stopWatching = await watchContainerDeaths(d, (containerId, why) => {
      driver.pool?.forget(containerId);
      for (const s of driver.sandboxes.values()) if (s.info.containerId === containerId) s.markLost(why);
    });
    if (opts.warmPool && opts.warmPool.size > 0) {
      const poolImages = opts.warmPool.images?.length ? opts.warmPool.images : [images.sandbox];
      driver.pool = new WarmPool(
        {
          docker: d,
          start: (image, imageId, sandboxId) =>
            driver.starter.pooled(
              image,
              imageId,
              sandboxId,
              { ...DEFAULT_LIMITS, ...opts.limits },
              driver.poolStateDir(),
            ),
          onProblem: (m) => log?.warn(m),
        },
        opts.warmPool.size,
        poolImages,
      );
      const deps = {
        pool: driver.pool,
        nc,
        identity: nats.identity,
        docker: d,
        stateDir: driver.poolStateDir(),
        limits: { ...DEFAULT_LIMITS, ...opts.limits },
      };
      driver.claimer = (req) => claimPooled({ ...deps, onProblem: (m) => log?.warn(m) }, req);
      void driver.pool.fill();
    } else if (process.env[POOL_SOCKET_ENV]) {
      // A worker's run child: the worker holds the pool (pool-link.ts).
      driver.claimer = remoteClaimer(d, process.env[POOL_SOCKET_ENV], () => driver.poolStateDir());
    }
    return driver;
  }

  get active(): Sandbox[] {
    return [...this.sandboxes.values()];
  }

  async createSandbox(opts: CreateSandboxOptions): Promise<Sandbox> {
    const t0 = performance.now();
    const timings: Record<string, number> = {};
    let t = t0;
    const mark = (phase: string): void => {
      const now = performance.now();
      timings[phase] = Math.round((now - t) * 10) / 10;
      t = now;
    };
    const runId = opts.runId;
    if (opts.repoDir) await assertDirectory(opts.repoDir);
    const limits = { ...DEFAULT_LIMITS, ...this.opts.limits, ...opts.limits };
    const image = opts.image ?? this.images.sandbox;
    const d = this.docker;
    let started: StartedSandbox | undefined;
    let claimStateDir: string | undefined;
    let proxy: EgressProxy | undefined;
    const keys = invocationKeys();
    const subscriptions: Subscription[] = [];
    const cleanup = async (): Promise<void> => {
      for (const s of subscriptions) s.unsubscribe();
      if (proxy) await proxy.stop().catch(() => undefined);
      if (started) await removeStarted(d, started);
      if (started && claimStateDir) removeClaim(claimStateDir, started.sandboxId);
      if (started) this.sandboxes.delete(started.sandboxId);
    };

    // Planned while the sandbox starts: git's listing and the policy's checks are off the start's path.
    const copyPlan = opts.repoDir
      ? planCopy(opts.repoDir, {
          ...(opts.ignore ? { ignore: opts.ignore } : {}),
          ...(opts.pathRules ? { rules: opts.pathRules } : {}),
          ...(opts.copy?.exclude ? { exclude: opts.copy.exclude } : {}),
          ...(opts.copy?.include ? { include: opts.copy.include } : {}),
        })
      : undefined;
    copyPlan?.catch(() => undefined);
    try {
      // A pooled sandbox when one fits: started with the driver's limits, salvageable, labelled
      // with the pool's state directory. Its run is recorded on the host before it is bound.
      // (The pool checks the state directory and the limits: it serves runs like its sandboxes.)
      const fits = this.claimer && !opts.sandboxId && opts.salvage !== false;
      const egress = opts.egress;
      const runProxyEnv = egress ? proxyEnv(`http://${EGRESS_ALIAS}:${EGRESS_PORT}`) : undefined;
      // The claim binds the run (its identity handed over NATS); a cold start binds it below.
      const claimed = fits
        ? await this.claimer!({
            image,
            runId,
            invokeKey: keys.publicKeyPem,
            ...(runProxyEnv ? { proxyEnv: runProxyEnv } : {}),
            ...(opts.stateDir ? { stateDir: path.resolve(opts.stateDir) } : {}),
            limits,
          })
        : undefined;
      if (claimed) {
        started = claimed.started;
        claimStateDir = claimed.stateDir;
        timings.claim = claimed.ms;
        t = performance.now();
      } else {
        started = await this.starter.cold(
          {
            image,
            limits,
            runId,
            sandboxId: opts.sandboxId ?? newId('sbx'),
            ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
            ...(opts.salvage === false ? { salvage: false } : {}),
          },
          opts.sandboxId !== undefined,
          mark,
        );
      }
      const { sandboxId, container, network } = started;
      const subjects = sandboxSubjects(runId, sandboxId);
      if (!claimed) {
        // A cold start is bound on the stdin its starter attached (bind-stdin.ts), or, on an engine
        // whose connection cannot carry an attach (ssh://), through the archive API.
        const identity = {
          runId,
          sandboxId,
          creds: await sandboxCreds(this.nats.identity, runId, sandboxId),
          invokeKey: keys.publicKeyPem,
          ...(runProxyEnv ? { proxyEnv: runProxyEnv } : {}),
        };
        if (started.stdin) await started.stdin.identity(identity);
        else await bindRunIdentity(container, identity);
        mark('bind');
      }
      const startingProxy = egress
        ? startEgressProxy(d, { runId, network, image: this.images.egress, ...egress, deny: [...(egress.deny ?? [])] })
        : undefined;
      startingProxy?.catch(() => undefined);

      const ready = this.awaitReady(subjects.ready, subscriptions);
      const sandbox = new Sandbox(
        { runId, sandboxId, containerId: container.id, networkId: network.id, timings },
        this.nc,
        subjects,
        container,
        cleanup,
        subscriptions,
        keys.privateKey,
      );
      subscriptions.push(
        this.nc.subscribe(subjects.heartbeat, {
          callback: (err, msg) => {
            if (!err && decodeMessage(Heartbeat, msg.data).ok) sandbox.lastHeartbeatAt = Date.now();
          },
        }),
      );
      this.sandboxes.set(sandboxId, sandbox);
      // The daemon connects to NATS while the repository is copied in; the protect list goes in
      // last (on a cold start's stdin, else as a root-only file in the state directory), and its
      // arrival tells the daemon the workspace is complete.
      const copy: CopyReport = copyPlan ? await sendCopy(container, await copyPlan) : EMPTY_COPY;
      sandbox.info.withheld = copy.withheld;
      sandbox.info.freshRepository = copy.freshRepository;
      if (copy.freshRepositoryReason) sandbox.info.freshRepositoryReason = copy.freshRepositoryReason;
      sandbox.info.protectedPaths = copy.protect.entries.length + copy.protect.dirs.length;
      sandbox.info.copySkipped = copy.skipped;
      sandbox.info.copiedPaths = copy.copiedPaths;
      sandbox.info.copyNotices = copy.notices;
      proxy = await startingProxy;
      const complete = { ...copy.protect, freshRepository: copy.freshRepository };
      if (started.stdin) await started.stdin.workspaceComplete(complete);
      else await completeWorkspace(container, complete);
      mark('copy');
      await raceReady(ready.promise, container, sandboxId, this.opts.readyTimeoutMs ?? 30_000);
      ready.dispose();
      sandbox.lastHeartbeatAt = Date.now();
      sandbox.ready = true;
      mark('ready');
      timings.total = Math.round((performance.now() - t0) * 10) / 10;
      this.opts.log?.debug({ runId, sandboxId, timings, pooled: !!claimStateDir }, 'sandbox ready');
      return sandbox;
    } catch (e) {
      await cleanup();
      throw e;
    }
  }

  /** The state directory pooled sandboxes are labelled with (and their claims recorded in). */
  poolStateDir(): string {
    return path.resolve(this.opts.stateDir ?? resolveStateDir());
  }

  private awaitReady(subject: string, subscriptions: Subscription[]): { promise: Promise<void>; dispose: () => void } {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err && decodeMessage(Heartbeat, msg.data).ok) resolve();
      },
    });
    subscriptions.push(sub);
    return {
      promise,
      dispose: () => {
        sub.unsubscribe();
        const i = subscriptions.indexOf(sub);
        if (i >= 0) subscriptions.splice(i, 1);
      },
    };
  }

  private checkHeartbeats(): void {
    const now = Date.now();
    if (!this.heartbeatClock.tick(now)) return;
    for (const s of this.sandboxes.values()) {
      if (!s.ready || s.lost) continue;
      const silence = this.heartbeatClock.silence(now, s.lastHeartbeatAt);
      if (silence > this.lostAfterMs) s.markLost(`no heartbeat for ${silence} ms`);
    }
  }

  /** Destroys every sandbox this driver started, then disconnects. */
  async imageId(tag: string): Promise<string> {
    return ((await this.docker.getImage(tag).inspect()) as { Id: string }).Id;
  }

  imageExists(tag: string): Promise<boolean> {
    return imageExists(tag, this.docker);
  }

  imageFromWorkspace(sandbox: Sandbox, o: WorkspaceImageOptions): Promise<WorkspaceImageReport> {
    return imageFromWorkspace(this.docker, sandbox.container, o);
  }

  async reapRun(stateDir: string, runId: string): Promise<void> {
    await reapOrphans(this.docker, false, { stateDir, runId, saveIntoStateDir: true });
  }

  async close(): Promise<void> {
    clearInterval(this.watchdog);
    this.stopWatching?.();
    await this.pool?.close();
    await this.networks?.close();
    await Promise.all([...this.sandboxes.values()].map((s) => s.destroy().catch(() => undefined)));
    await this.nc.drain().catch(() => undefined);
  }
}

async function assertDirectory(dir: string): Promise<void> {
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory())
    throw new SandboxError(`repository ${dir} is not a directory; pass --repo with an existing directory`);
}

export { LABEL };
