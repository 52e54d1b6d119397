import type Docker from 'dockerode';
import { newId } from '@gatehouse/shared';
import { removeStarted, type StartedSandbox } from './sandbox-start';

export interface WarmPoolOptions {
  /** Started sandboxes kept ready per image (the pool holds at most size × images.length). */
  size: number;
  /** Images to keep sandboxes of (run images, e.g. ensureRunImage's); the driver's default sandbox when empty. */
  images?: string[];
}

export interface WarmPoolDeps {
  docker: Docker;
  /** Starts one pooled sandbox (no run, no identity) of `image`, whose current id is `imageId`. */
  start: (image: string, imageId: string, sandboxId: string) => Promise<StartedSandbox>;
  onProblem?: (message: string) => void;
}

/**
 * Sandboxes started ahead of their runs, per image. A claim takes one out (never to return: it is
 * removed at its run's end) and refills in the background, one start at a time per image so the pool
 * never competes with runs for more than one core. An entry of an image rebuilt since it started is
 * discarded at claim; one whose container died is forgotten.
 */
export class WarmPool {
  private readonly ready = new Map<string, StartedSandbox[]>();
  private readonly filling = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    private readonly deps: WarmPoolDeps,
    readonly size: number,
    readonly images: readonly string[],
  ) {
    for (const image of images) this.ready.set(image, []);
  }

  /** Starts filling every image's pool; resolves when each is full (or failed trying). */
  fill(): Promise<void> {
    return Promise.all(this.images.map((i) => this.refill(i))).then(() => undefined);
  }

  /** How many ready sandboxes the pool holds for `image`. */
  available(image: string): number {
    return this.ready.get(image)?.length ?? 0;
  }

  /**
   * Takes a ready sandbox of `image`, or undefined (not pooled, or empty: the caller starts one
   * cold). Whether the image was rebuilt since the sandbox started is asked beside the claim, not
   * before it (a Docker round trip): `current` resolves false for an entry of an older build, and
   * then every entry of that build is removed too. The caller removes the one it took.
   */
  claim(image: string): { entry: StartedSandbox; current: Promise<boolean> } | undefined {
    const entries = this.ready.get(image);
    if (!entries || this.closed) return undefined;
    const entry = entries.shift();
    void this.refill(image);
    if (!entry) return undefined;
    const current = this.imageId(image).then(
      (id) => {
        if (id === entry.imageId) return true;
        const left = this.ready.get(image) ?? [];
        this.ready.set(
          image,
          left.filter((e) => e.imageId === id),
        );
        for (const e of left.filter((x) => x.imageId !== id)) void removeStarted(this.deps.docker, e);
        return false;
      },
      () => false,
    );
    return { entry, current };
  }

  /** A pooled container died (Docker's die event): it is no longer offered. */
  forget(containerId: string): void {
    for (const [image, entries] of this.ready) {
      const gone = entries.filter((e) => e.container.id === containerId);
      if (gone.length === 0) continue;
      this.ready.set(
        image,
        entries.filter((e) => e.container.id !== containerId),
      );
      for (const e of gone) void removeStarted(this.deps.docker, e);
      void this.refill(image);
    }
  }

  /** Removes every unclaimed sandbox; claimed ones belong to their runs. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.filling.values()].map((p) => p.catch(() => undefined)));
    const all = [...this.ready.values()].flat();
    for (const image of this.ready.keys()) this.ready.set(image, []);
    await Promise.all(all.map((e) => removeStarted(this.deps.docker, e)));
  }

  private refill(image: string): Promise<void> {
    const running = this.filling.get(image);
    if (running) return running;
    const p = this.fillUp(image).finally(() => this.filling.delete(image));
    this.filling.set(image, p);
    return p;
  }

  private async fillUp(image: string): Promise<void> {
    for (let failures = 0; !this.closed && this.available(image) < this.size && failures < 3;) {
      try {
        const entry = await this.deps.start(image, await this.imageId(image), newId('sbx'));
        if (this.closed) {
          await removeStarted(this.deps.docker, entry);
          return;
        }
        this.ready.get(image)!.push(entry);
      } catch (e) {
        failures++;
        this.deps.onProblem?.(`warm pool: starting a sandbox of ${image} failed: ${(e as Error).message}`);
      }
    }
  }

  private async imageId(image: string): Promise<string> {
    return (await this.deps.docker.getImage(image).inspect()).Id;
  }
}
