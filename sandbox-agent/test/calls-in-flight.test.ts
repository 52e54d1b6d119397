import { describe, expect, it } from 'vitest';
import { CallsInFlight } from '../src/calls-in-flight';

describe('CallsInFlight', () => {
  it('cancels a running call', () => {
    const calls = new CallsInFlight();
    const signal = calls.start('inv_a');
    expect(calls.size).toBe(1);
    calls.cancel('inv_a');
    expect(signal.aborted).toBe(true);
    calls.end('inv_a');
    expect(calls.size).toBe(0);
  });

  it('remembers a cancel that came first, once', () => {
    const calls = new CallsInFlight();
    calls.cancel('inv_early');
    expect(calls.start('inv_early').aborted).toBe(true);
    calls.end('inv_early');
    expect(calls.start('inv_early').aborted).toBe(false);
  });

  it('remembers a bounded number of early cancels, forgetting the oldest', () => {
    const calls = new CallsInFlight();
    for (let i = 0; i <= 1024; i++) calls.cancel(`inv_${i}`);
    expect(calls.start('inv_0').aborted).toBe(false);
    expect(calls.start('inv_1').aborted).toBe(true);
    expect(calls.start('inv_1024').aborted).toBe(true);
  });

  it('cancelAll aborts every running call', () => {
    const calls = new CallsInFlight();
    const a = calls.start('a');
    const b = calls.start('b');
    calls.cancelAll();
    expect([a.aborted, b.aborted]).toEqual([true, true]);
  });
});
