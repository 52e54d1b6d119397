import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../src/stdin-lines';

describe('readLines (the binding on stdin)', () => {
  it('returns a line only once its newline came, however the chunks fall', async () => {
    const input = new PassThrough();
    const lines = readLines(input);
    const first = lines.next('run identity', 2000, 1024);
    input.write('{"a":');
    input.write('1}');
    input.write('\n{"b":2}\n{"c"');
    expect(await first).toBe('{"a":1}');
    expect(await lines.next('protect list', 2000, 1024)).toBe('{"b":2}');
    const third = lines.next('third', 2000, 1024);
    input.write(':3}\n');
    expect(await third).toBe('{"c":3}');
    lines.close();
    expect(input.destroyed).toBe(true);
  });

  it('fails at once, naming what was missing, when stdin ends first', async () => {
    const input = new PassThrough();
    const lines = readLines(input);
    input.end('{"half":');
    await expect(lines.next('run identity', 5000, 1024)).rejects.toThrow('no run identity on stdin: it was closed');
  });

  it('refuses a line longer than its bound, whole or still arriving', async () => {
    const whole = new PassThrough();
    const a = readLines(whole);
    whole.write(`${'x'.repeat(2000)}\n`);
    await expect(a.next('run identity', 1000, 1024)).rejects.toThrow('run identity is longer than 1024 bytes');
    const partial = new PassThrough();
    const b = readLines(partial);
    partial.write('y'.repeat(3000));
    await expect(b.next('run identity', 1000, 1024)).rejects.toThrow('run identity is longer than 1024 bytes');
  });

  it('gives up after its wait, and says how long it waited', async () => {
    const lines = readLines(new PassThrough());
    await expect(lines.next('protect list', 50, 1024)).rejects.toThrow('no protect list on stdin after 50 ms');
  });

  it('reports a failing stream as the reason', async () => {
    const input = new PassThrough();
    const lines = readLines(input);
    input.destroy(new Error('EPIPE'));
    await expect(lines.next('run identity', 1000, 1024)).rejects.toThrow('reading it failed: EPIPE');
  });
});
