import { describe, expect, it } from 'vitest';
import { HeadTailBuffer } from '../src/capture';
import { Journal } from '../src/journal';
import type { InvocationResult } from '@gatehouse/shared';

describe('HeadTailBuffer', () => {
  it('keeps everything under the cap', () => {
    const b = new HeadTailBuffer(100);
    b.push(Buffer.from('hello '));
    b.push(Buffer.from('world'));
    expect(b.text()).toBe('hello world');
    expect(b.truncated).toBe(false);
    expect(b.total).toBe(11);
  });

  it('keeps head and tail of a flood and says how much was dropped', () => {
    const b = new HeadTailBuffer(20);
    b.push(Buffer.from('HEAD-'));
    for (let i = 0; i < 10_000; i++) b.push(Buffer.from('..........'));
    b.push(Buffer.from('-TAIL'));
    expect(b.truncated).toBe(true);
    expect(b.total).toBe(100_010);
    const text = b.text();
    expect(text.startsWith('HEAD-.....')).toBe(true);
    expect(text.endsWith('.....-TAIL')).toBe(true);
    expect(text).toContain('[… 99990 bytes omitted …]');
  });

  it('handles a single chunk larger than the cap', () => {
    const b = new HeadTailBuffer(10);
    b.push(Buffer.from('abcdefghijklmnopqrstuvwxyz'));
    expect(b.text()).toBe('abcde\n[… 16 bytes omitted …]\nvwxyz');
  });
});

describe('Journal (at-most-once)', () => {
  const result = (id: string, output = 'x'): InvocationResult => ({
    v: 1,
    invocationId: id,
    runId: 'r',
    sandboxId: 's',
    status: 'ok',
    exitCode: 0,
    signal: null,
    output,
    bytes: output.length,
    truncated: false,
    durationMs: 1,
    filesChanged: [],
    replayed: false,
  });

  it('runs an id once; a second lookup gets the same promise', async () => {
    const j = new Journal();
    let runs = 0;
    const first = j.record('a', async () => (runs++, result('a')));
    expect(j.lookup('a')).toBe(first);
    await first;
    expect(runs).toBe(1);
    expect(j.lookup('b')).toBeUndefined();
  });

  it('remembers evicted ids as expired instead of forgetting them', async () => {
    const j = new Journal();
    for (let i = 0; i < 600; i++) await j.record(`id${i}`, async () => result(`id${i}`));
    await new Promise((r) => setTimeout(r, 0));
    expect(j.size).toBeLessThanOrEqual(512);
    expect(j.lookup('id0')).toBe('expired');
    expect(j.has('id0')).toBe(true);
    expect(j.lookup('id599')).toBeInstanceOf(Promise);
  });
});
