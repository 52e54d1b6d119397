import type Docker from 'dockerode';
import { newId } from '@gatehouse/shared';
import { attachNats, createRunNetwork, removeNetwork } from './network';
import { startNetworkHolder } from './network-holder';

/** A run network made ahead of its sandbox, NATS attached: the sandbox that takes it gets its id. */
export interface PreparedNetwork {
  sandboxId: string;
  network: Docker.Network;
  /** NATS's address on it. */
  natsIp: string;
  /** The container holding its namespace, which the sandbox joins (network-holder.ts). */
  holder: Docker.Container;
}

/**
 * A few run networks created in the background (with NATS attached and a holder started on each:
 * network-holder.ts), so that a cold start skips the network phase (75–170 ms here) and Docker's
 * attach to the network (55–70 ms of `docker start`). Each is made for one sandbox id and taken once: a network is
 * never handed to a second sandbox, and it is removed with the sandbox that took it. Unused ones
 * are removed by close(); their owner label lets the reaper remove them if this process dies.
 */
export class NetworkPool {
  private readonly ready: PreparedNetwork[] = [];
  private filling: Promise<void> | undefined;
  private readonly waiters: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly d: Docker,
    private readonly natsContainer: string,
    /** The image network holders run (the NATS image: it has `sleep`). */
    private readonly holderImage: string,
    readonly size: number,
    private readonly onProblem: (message: string) => void = () => undefined,
    /** Make another behind each one taken (false: only the first `size`, for a one-run process). */
    private readonly refill = true,
  ) {}

  /** Starts making networks until `size` are ready. */
  fill(): Promise<void> {
    if (!this.filling && !this.closed && this.ready.length < this.size)
      this.filling = this.fillUp().finally(() => (this.filling = undefined));
    return this.filling ?? Promise.resolve();
  }

  /**
   * A ready network, or the one being made (never slower than making one now); undefined when the
   * pool is empty and idle, or closed. The pool refills behind it once the caller says its
   * sandbox has started (`started`): making a network while a container starts slows that start
   * by about as much as the network would have cost (both take the engine's iptables lock;
   * measured here: `docker start` p50 291 ms beside a refill, 221 ms without).
   */
  async take(): Promise<PreparedNetwork | undefined> {
    while (this.ready.length === 0 && this.filling && !this.closed)
      await Promise.race([this.filling, new Promise<void>((r) => this.waiters.push(r))]);
    return this.closed ? undefined : this.ready.shift();
  }

  /** A sandbox on a network taken from here has started (or failed to): time to make the next. */
  started(): void {
    if (this.refill) void this.fill();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.filling?.catch(() => undefined);
    const unused = this.ready.splice(0);
    await Promise.all(unused.map((n) => removeNetwork(this.d, n.network.id).catch(() => undefined)));
  }

  private async fillUp(): Promise<void> {
    for (let failures = 0; !this.closed && this.ready.length < this.size && failures < 3;) {
      const sandboxId = newId('sbx');
      let network: Docker.Network | undefined;
      try {
        network = await createRunNetwork(this.d, sandboxId, {});
        const natsIp = await attachNats(this.d, network, this.natsContainer);
        const holder = await startNetworkHolder(this.d, this.holderImage, network, sandboxId);
        if (this.closed) throw new Error('closed');
        this.ready.push({ sandboxId, network, natsIp, holder });
        for (const wake of this.waiters.splice(0)) wake();
      } catch (e) {
        if (network) await removeNetwork(this.d, network.id).catch(() => undefined);
        if (this.closed) return;
        failures++;
        this.onProblem(`network pool: making a run network failed: ${(e as Error).message}`);
      }
    }
  }
}
