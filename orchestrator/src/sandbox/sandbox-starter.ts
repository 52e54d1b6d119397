import type Docker from 'dockerode';
import type { NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { SandboxLimits } from './container';
import { SandboxError } from './errors';
import { checkDeclaredVolumes } from './image-volumes';
import type { NatsEndpoint } from './nats-server';
import type { NetworkPool } from './network-pool';
import { isRuntimeFailure } from './oci-runtime';
import { bootstrapPooled } from './pool-handoff';
import { startSandboxContainer, type StartedSandbox, type StartSpec } from './sandbox-start';

export interface StarterOptions {
  /** Bind cold starts on their stdin (bind-stdin.ts); false: through the archive API. */
  bindOverStdin: boolean;
  heartbeatMs: number;
  readyTimeoutMs: number;
  /** The OCI runtime to ask for (oci-runtime.ts fasterRuntime); dropped for good if it fails to start one. */
  runtime?: string;
  /** Networks made ahead for cold starts (network-pool.ts). */
  networks?: NetworkPool;
  log?: Logger;
}

export type ColdSpec = Omit<StartSpec, 'imageId' | 'imageVolumes' | 'heartbeatMs' | 'runtime' | 'prepared'>;

/** Starts sandbox containers, cold or for a warm pool, the way one driver wants them. */
export class SandboxStarter {
  private readonly volumesByImage = new Map<string, string[]>();

  constructor(
    private readonly d: Docker,
    private readonly nats: NatsEndpoint,
    private readonly nc: NatsConnection,
    private readonly o: StarterOptions,
  ) {}

  useRuntime(runtime: string): void {
    this.o.runtime = runtime;
  }

  /**
   * A cold start: on a network made ahead when one is ready (unless the caller chose the sandbox
   * id), else on one made now.
   */
  async cold(spec: ColdSpec, sandboxIdChosen: boolean, mark: (phase: string) => void): Promise<StartedSandbox> {
    // Before a network is taken: an image refused here must not strand one.
    const full = {
      ...spec,
      imageId: '',
      bindOverStdin: this.o.bindOverStdin,
      imageVolumes: await this.declaredVolumes(spec.image),
      heartbeatMs: this.o.heartbeatMs,
    };
    const prepared = sandboxIdChosen ? undefined : await this.o.networks?.take();
    if (!prepared) return this.start(full, mark);
    try {
      return await this.start({ ...full, sandboxId: prepared.sandboxId, prepared }, mark);
    } catch (e) {
      // A network made ahead can go bad while it waits (its holder stopped, an engine restarted):
      // the failed start removed it; the sandbox is started once more on a network of its own.
      this.o.log?.warn(
        `starting a sandbox on a network made ahead failed (${(e as Error).message}); once more without`,
      );
      return await this.start(full, mark);
    } finally {
      this.o.networks?.started();
    }
  }

  /**
   * A warm pool's sandbox: no run, waiting up to a day for its claim, connected to NATS as a
   * one-time user that can only receive its identity (pool-handoff.ts). Offered once it listens.
   */
  async pooled(image: string, imageId: string, sandboxId: string, limits: SandboxLimits, stateDir: string) {
    const started = await this.start({
      image,
      imageId,
      sandboxId,
      limits,
      imageVolumes: await this.declaredVolumes(image),
      heartbeatMs: this.o.heartbeatMs,
      pool: image,
      stateDir,
      identityWaitMs: 86_400_000,
    });
    return bootstrapPooled(this.d, this.nc, this.nats.identity, started, this.o.readyTimeoutMs);
  }

  /**
   * Under the faster runtime when there is one; if the engine lists it but it cannot start a
   * container here (Debian 12's crun on a host with cgroups in hybrid mode), once more under the
   * engine's default, which every later start then uses.
   */
  private async start(spec: Omit<StartSpec, 'runtime'>, mark?: (phase: string) => void): Promise<StartedSandbox> {
    const runtime = this.o.runtime;
    if (!runtime) return startSandboxContainer(this.d, this.nats, spec, mark);
    try {
      return await startSandboxContainer(this.d, this.nats, { ...spec, runtime }, mark);
    } catch (e) {
      if (!isRuntimeFailure(e)) throw e;
      this.o.log?.warn(`the ${runtime} runtime failed to start a sandbox (${(e as Error).message}); using runc`);
      this.o.runtime = undefined;
      // The failed start removed its network, a prepared one too: this one makes its own.
      const { prepared: _prepared, ...rest } = spec;
      return startSandboxContainer(this.d, this.nats, rest, mark);
    }
  }

  /** The VOLUMEs an image declares (cached: an image id's config never changes). */
  private async declaredVolumes(image: string): Promise<string[]> {
    let volumes = this.volumesByImage.get(image);
    if (!volumes) {
      const info = await this.d
        .getImage(image)
        .inspect()
        .catch((e: Error) => {
          throw new SandboxError(
            `sandbox image ${image} is not available (${e.message}); derive it with ensureRunImage`,
          );
        });
      volumes = Object.keys(info.Config?.Volumes ?? {});
      checkDeclaredVolumes(image, volumes);
      this.volumesByImage.set(image, volumes);
    }
    return volumes;
  }
}
