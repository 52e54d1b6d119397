import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlainFileError, readPlainFile } from '../../src/files/read-plain-file';

/**
 * A hostile repository can put a FIFO, socket, device or huge file where gatehouse reads one: each
 * is refused at once, with its kind named, and no read waits on a writer.
 */
describe('readPlainFile', () => {
  const closers: (() => void)[] = [];
  afterEach(() => closers.splice(0).forEach((c) => c()));
  const dir = (): string => mkdtempSync(path.join(os.tmpdir(), 'gh-plain-'));

  /** Opens the FIFO for writing after a moment, so a reader that blocks is released (bounded by timeout). */
  function releaseLater(fifo: string): void {
    spawn('timeout', ['8', 'sh', '-c', `sleep 2; exec 3>'${fifo}'`], { stdio: 'ignore' }).unref();
  }

  function refusal(file: string, max = 1024): PlainFileError {
    try {
      readPlainFile(file, max);
    } catch (e) {
      expect(e).toBeInstanceOf(PlainFileError);
      return e as PlainFileError;
    }
    throw new Error(`${file} was read`);
  }

  it('reads a regular file whole', () => {
    const f = path.join(dir(), 'a.json');
    writeFileSync(f, '{"deny":[]}');
    expect(readPlainFile(f, 1024).toString('utf8')).toBe('{"deny":[]}');
    expect(readPlainFile(f, 11).length).toBe(11);
  });

  it('refuses a FIFO at once, without waiting for a writer', () => {
    const f = path.join(dir(), 'policy.json');
    execFileSync('mkfifo', [f]);
    releaseLater(f);
    const started = Date.now();
    const e = refusal(f);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(e.problem).toBe('not-regular');
    expect(e.message).toMatch(/named pipe \(FIFO\), not a regular file/);
  });

  it('refuses a socket', async () => {
    const f = path.join(dir(), 'config.json');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(f, resolve));
    closers.push(() => server.close());
    const e = refusal(f);
    expect(e.problem).toBe('not-regular');
    expect(e.message).toMatch(/a socket, not a regular file/);
  });

  it('refuses a device without reading it', () => {
    const e = refusal('/dev/zero');
    expect(e.problem).toBe('not-regular');
    expect(e.message).toMatch(/character device/);
  });

  it('refuses a file over the limit before reading it', () => {
    const f = path.join(dir(), 'big.json');
    writeFileSync(f, Buffer.alloc(4096, 0x20));
    const e = refusal(f, 4095);
    expect(e.problem).toBe('too-large');
    expect(e.message).toMatch(/is 4096 bytes; at most 4095 bytes/);
  });

  it('refuses a symbolic link, even to a regular file', () => {
    const d = dir();
    writeFileSync(path.join(d, 'real.json'), '{}');
    symlinkSync(path.join(d, 'real.json'), path.join(d, 'link.json'));
    expect(refusal(path.join(d, 'link.json')).problem).toBe('symlink');
  });

  it('says when there is no such file', () => {
    expect(refusal(path.join(dir(), 'none.json')).problem).toBe('missing');
  });
});
