import { describe, expect, it } from 'vitest';
import { HeartbeatClock } from '../../src/sandbox/heartbeat-clock';

describe('HeartbeatClock', () => {
  it('counts silence from the last heartbeat while ticks come on time', () => {
    const clock = new HeartbeatClock(250);
    for (let t = 0; t <= 5000; t += 250) expect(clock.tick(t)).toBe(true);
    expect(clock.silence(5000, 1000)).toBe(4000);
  });

  it('skips the tick that ends a stall of this process, and counts silence only from its end', () => {
    const clock = new HeartbeatClock(250);
    clock.tick(0);
    clock.tick(250);
    // The loop was blocked for 4 s: heartbeats sent meanwhile are still unread.
    expect(clock.tick(4250)).toBe(false);
    expect(clock.silence(4250, 200)).toBe(0);
    expect(clock.tick(4500)).toBe(true);
    expect(clock.silence(4500, 200)).toBe(250);
  });

  it('still reports a sandbox that stays silent after the stall', () => {
    const clock = new HeartbeatClock(250);
    clock.tick(0);
    clock.tick(5000);
    let t = 5000;
    while (t < 9000) clock.tick((t += 250));
    expect(clock.silence(t, 100)).toBe(4000);
  });

  it('treats a gap up to the stall threshold as normal jitter', () => {
    const clock = new HeartbeatClock(250);
    clock.tick(0);
    expect(clock.tick(1000)).toBe(true);
    expect(clock.tick(2001)).toBe(false);
  });
});
