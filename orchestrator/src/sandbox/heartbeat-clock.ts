/**
 * Judges heartbeat silence only over time this process was awake to hear it.
 *
 * Heartbeats are read from a socket; if the orchestrator's own event loop is blocked (a slow
 * fsync under Docker's disk load, a long synchronous step), they pile up unread, and when the loop
 * wakes, Node runs timers before it reads sockets. Counting that stall as silence reports every
 * live sandbox lost at once. So a watchdog tick that comes much later than scheduled marks the
 * end of a stall, and silence is counted from there at the earliest: a sandbox that is really gone
 * is still reported, one loss threshold after the stall.
 */
export class HeartbeatClock {
  #lastTick: number | undefined;
  #awakeSince = Number.NEGATIVE_INFINITY;

  /**
   * @param tickMs how often `tick` is called
   * @param stallMs a gap between ticks longer than this is a stall of this process
   */
  constructor(
    readonly tickMs: number,
    readonly stallMs: number = Math.max(1000, 4 * tickMs),
  ) {}

  /** Call once per watchdog tick; false when this tick ends a stall and nothing should be judged. */
  tick(now: number): boolean {
    const stalled = this.#lastTick !== undefined && now - this.#lastTick > this.stallMs;
    this.#lastTick = now;
    if (stalled) this.#awakeSince = now;
    return !stalled;
  }

  /** How long a sandbox last heard from at `lastHeartbeatAt` has been silent while this process listened. */
  silence(now: number, lastHeartbeatAt: number): number {
    return now - Math.max(lastHeartbeatAt, this.#awakeSince);
  }
}
