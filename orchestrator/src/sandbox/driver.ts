import { stat } from 'node:fs/promises';
import type Docker from 'dockerode';
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import { decodeMessage, Heartbeat, invocationKeys, newId, sandboxSubjects, type Id } from '@gatehouse/shared';
import type { PathDenial } from '../policy/path-denial';
import { putFiles } from './archive';
import {
  CREDS_FILE,
  DAEMON_UID,
  DEFAULT_LIMITS,
  INVOKE_KEY_FILE,
  PROTECT_FILE,
  STATE_DIR,
  sandboxContainerOptions,
  type SandboxLimits,
} from './container';
import { copyRepository, type CopyReport } from './copy-in';
import { assertDockerReachable, docker } from './docker';
import { SandboxError } from './errors';
import { ensureImages, type BaseChoice, type Images } from './images';
import { LABEL } from './labels';
import { sandboxCreds } from './nats-auth';
import { connectOrchestrator, ensureNatsServer, type NatsEndpoint } from './nats-server';
import { attachNats, createRunNetwork, removeNetwork } from './network';
import { EGRESS_ALIAS, EGRESS_PORT } from './egress-container';
import { proxyEnv, startEgressProxy, type EgressProxy, type EgressProxyOptions } from './egress-proxy';
import { HeartbeatClock } from './heartbeat-clock';
import { reapOrphans, type ReapReport } from './reaper';
import { Sandbox } from './sandbox';
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
}

export interface CreateSandboxOptions {
  runId: Id;
  sandboxId?: Id;
  /** Host directory copied into /workspace (with .git). Omit for an empty workspace. */
  repoDir?: string;
  /** Paths (relative to repoDir) to leave out of the copy, unreported (the state directory). */
  ignore?: (relPath: string) => boolean;
  /** The project config's `copy`: globs never copied, and ignored paths copied all the same. */
  copy?: { exclude?: string[]; include?: string[] };
  /**
   * The policy's path rules, enforced by the file system: what is denied for reading is not copied
   * in, what is denied for writing is made root-owned (read-only to commands) before anything runs.
   */
  pathRules?: PathDenial;
  limits?: Partial<SandboxLimits>;
  /**
   * The run image to start (ensureRunImage(resolveToolchainImage(spec))); default: the driver's
   * default sandbox, derived from preset:node.
   */
  image?: string;
  /** Where the run's log lives: a label, so a reaper in any process saves the orphan's workspace there. */
  stateDir?: string;
  /**
   * false: if the orchestrator dies, the reaper removes this sandbox without saving its workspace
   * (setup's sandbox, whose files may hold what setup wrote with its secrets).
   */
  salvage?: boolean;
  /**
   * A way out through a per-run egress proxy allowing exactly these hosts (docs/egress.md); without
   * it the sandbox reaches nothing. Every command gets the proxy settings.
   */
  egress?: Pick<EgressProxyOptions, 'phase' | 'allow' | 'deny' | 'onDecision' | 'onProblem'>;
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
export class SandboxDriver {
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly volumesByImage = new Map<string, string[]>();
  private readonly watchdog: NodeJS.Timeout;
  private readonly heartbeatClock: HeartbeatClock;
  private stopWatching: (() => void) | undefined;
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
    driver.stopWatching = await watchContainerDeaths(d, (containerId, why) => {
      for (const s of driver.sandboxes.values()) if (s.info.containerId === containerId) s.markLost(why);
    });
    return driver;
  }

  get active(): Sandbox[] {
    return [...this.sandboxes.values()];
  }

  async createSandbox(opts: CreateSandboxOptions): Promise<Sandbox> {
    const t0 = performance.now();
    const timings: Record<string, number> = {};
    const mark = (phase: string, since: number): number => {
      const now = performance.now();
      timings[phase] = Math.round((now - since) * 10) / 10;
      return now;
    };
    const runId = opts.runId;
    if (opts.repoDir) await assertDirectory(opts.repoDir);
    const sandboxId = opts.sandboxId ?? newId('sbx');
    const subjects = sandboxSubjects(runId, sandboxId);
    const limits = { ...DEFAULT_LIMITS, ...this.opts.limits, ...opts.limits };
    const d = this.docker;
    let network: Docker.Network | undefined;
    let container: Docker.Container | undefined;
    let proxy: EgressProxy | undefined;
    const subscriptions: Subscription[] = [];
    const cleanup = async (): Promise<void> => {
      for (const s of subscriptions) s.unsubscribe();
      if (proxy) await proxy.stop().catch(() => undefined);
      if (container) await container.remove({ force: true, v: true }).catch(() => undefined);
      if (network) await removeNetwork(d, network.id).catch(() => undefined);
      this.sandboxes.delete(sandboxId);
    };

    try {
      let t = t0;
      const image = opts.image ?? this.images.sandbox;
      const imageVolumes = await this.declaredVolumes(image);
      network = await createRunNetwork(d, runId, sandboxId);
      const natsIp = await attachNats(d, network, this.nats.container);
      t = mark('network', t);
      // Minted first: if this fails there is no container yet to leak.
      const creds = await sandboxCreds(this.nats.identity, runId, sandboxId);
      const keys = invocationKeys();
      const egress = opts.egress;
      const [created, startedProxy] = await Promise.all([
        d.createContainer(
          sandboxContainerOptions({
            image,
            runId,
            sandboxId,
            network: network.id,
            natsUrl: `nats://${natsIp}:4222`,
            heartbeatMs: this.heartbeatMs,
            limits,
            ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
            ...(opts.salvage === false ? { salvage: false } : {}),
            imageVolumes,
            ...(egress ? { proxyEnv: proxyEnv(`http://${EGRESS_ALIAS}:${EGRESS_PORT}`) } : {}),
          }),
        ),
        egress
          ? startEgressProxy(d, {
              runId,
              network,
              image: this.images.egress,
              ...egress,
              deny: [...(egress.deny ?? [])],
            })
          : undefined,
      ]);
      container = created;
      proxy = startedProxy;
      t = mark('create', t);

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
      await container.start();
      t = mark('start', t);
      // The daemon loads while the repository is copied in. Credentials go in last, as a file
      // (deleted by the daemon once read) rather than an environment variable `docker inspect`
      // would show; their arrival tells the daemon the workspace is complete. Everything in the
      // state directory is root's, mode 0600, in a 0700 directory: commands cannot read it.
      const copy: CopyReport = opts.repoDir
        ? await copyRepository(container, opts.repoDir, {
            ...(opts.ignore ? { ignore: opts.ignore } : {}),
            ...(opts.pathRules ? { rules: opts.pathRules } : {}),
            ...(opts.copy?.exclude ? { exclude: opts.copy.exclude } : {}),
            ...(opts.copy?.include ? { include: opts.copy.include } : {}),
          })
        : EMPTY_COPY;
      sandbox.info.withheld = copy.withheld;
      sandbox.info.freshRepository = copy.freshRepository;
      if (copy.freshRepositoryReason) sandbox.info.freshRepositoryReason = copy.freshRepositoryReason;
      sandbox.info.protectedPaths = copy.protect.entries.length + copy.protect.dirs.length;
      sandbox.info.copySkipped = copy.skipped;
      sandbox.info.copiedPaths = copy.copiedPaths;
      sandbox.info.copyNotices = copy.notices;
      const own = { mode: 0o600, uid: DAEMON_UID, gid: DAEMON_UID };
      await putFiles(container, STATE_DIR, [
        { name: INVOKE_KEY_FILE.slice(STATE_DIR.length + 1), content: keys.publicKeyPem, ...own },
        {
          name: PROTECT_FILE.slice(STATE_DIR.length + 1),
          content: JSON.stringify({ ...copy.protect, freshRepository: copy.freshRepository }),
          ...own,
        },
        { name: CREDS_FILE.slice(STATE_DIR.length + 1), content: creds, ...own },
      ]);
      t = mark('copy', t);
      await this.raceReady(ready.promise, container, sandboxId);
      ready.dispose();
      sandbox.lastHeartbeatAt = Date.now();
      sandbox.ready = true;
      mark('ready', t);
      mark('total', t0);
      this.opts.log?.debug({ runId, sandboxId, timings }, 'sandbox ready');
      return sandbox;
    } catch (e) {
      await cleanup();
      throw e;
    }
  }

  /** The VOLUMEs an image declares (cached: an image id's config never changes). */
  private async declaredVolumes(image: string): Promise<string[]> {
    let volumes = this.volumesByImage.get(image);
    if (!volumes) {
      const info = await this.docker
        .getImage(image)
        .inspect()
        .catch((e: Error) => {
          throw new SandboxError(
            `sandbox image ${image} is not available (${e.message}); derive it with ensureRunImage`,
          );
        });
      volumes = Object.keys(info.Config?.Volumes ?? {});
      this.volumesByImage.set(image, volumes);
    }
    return volumes;
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

  /** Waits for the daemon's ready message; a container that exits first fails with its logs. */
  private async raceReady(ready: Promise<void>, container: Docker.Container, sandboxId: string): Promise<void> {
    const timeoutMs = this.opts.readyTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    let exited = false;
    const died = container.wait().then(async (r: { StatusCode: number }) => {
      exited = true;
      const logs = (await container.logs({ stdout: true, stderr: true, tail: 30 })).toString('utf8');
      throw new SandboxError(`sandbox ${sandboxId} exited with code ${r.StatusCode} before it was ready:\n${logs}`);
    });
    try {
      await Promise.race([
        ready,
        died,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new SandboxError(`sandbox ${sandboxId} was not ready within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (!exited) died.catch(() => undefined);
    }
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
  async close(): Promise<void> {
    clearInterval(this.watchdog);
    this.stopWatching?.();
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
