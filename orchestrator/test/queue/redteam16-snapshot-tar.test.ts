import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ObjectStore } from 'nats';
import tarStream, { type Header } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { extractSnapshot, SnapshotError } from '../../src/queue/snapshot';

/**
 * Red team (issue 16): a hostile repository submitted through the queue, as a tar crafted by hand
 * (not by `gatehouse submit`), extracted on a worker. Nothing may land outside the run's folder,
 * through a link, as a hard link or device, or at all when the bytes differ from the job's hash.
 */
type Entry = Partial<Header> & Pick<Header, 'name'> & { body?: string };

async function tarOf(entries: Entry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => pack.on('end', () => r()));
  for (const { body, ...header } of entries) pack.entry(header, body ?? '');
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** The one call extractSnapshot makes on the object store: `get`, with the stored bytes. */
function storeHolding(bytes: Buffer): ObjectStore {
  return {
    get: (_name: string) =>
      Promise.resolve({ data: Readable.toWeb(Readable.from([bytes])), error: Promise.resolve(null) }),
  } as unknown as ObjectStore;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function extract(entries: Entry[]) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-tar-'));
  const outside = path.join(root, 'outside');
  const dest = path.join(root, 'work', 'run_x', 'repo');
  const bytes = await tarOf(entries);
  let error: unknown;
  try {
    await extractSnapshot(storeHolding(bytes), { name: 'run_x.tar', sha256: sha(bytes), bytes: bytes.length }, dest);
  } catch (e) {
    error = e;
  }
  return { root, outside, dest, error };
}

describe('redteam16: a crafted snapshot tar on a worker', () => {
  it('writes nothing through a symlink that points outside, then a file through it', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-tar-target-'));
    const r = await extract([
      { name: 'escape', type: 'symlink', linkname: root },
      { name: 'escape/pwned', type: 'file', body: 'owned' },
    ]);
    expect(readdirSync(root)).toEqual([]);
    expect(r.error).toBeInstanceOf(SnapshotError);
    expect(existsSync(r.dest)).toBe(false);
  });

  it('writes nothing through a relative symlink that climbs out', async () => {
    const r = await extract([
      { name: 'up', type: 'symlink', linkname: '../../../outside' },
      { name: 'up/pwned', type: 'file', body: 'owned' },
    ]);
    expect(existsSync(path.join(r.outside, 'pwned'))).toBe(false);
    expect(r.error).toBeInstanceOf(SnapshotError);
  });

  it('keeps `..` and absolute names inside the folder (or refuses them)', async () => {
    const abs = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-abs-')), 'pwned');
    const r = await extract([
      { name: '../../../outside-dotdot', type: 'file', body: 'owned' },
      { name: abs, type: 'file', body: 'owned' },
    ]);
    expect(existsSync(path.join(r.root, 'outside-dotdot'))).toBe(false);
    expect(existsSync(path.join(r.root, 'work', 'outside-dotdot'))).toBe(false);
    expect(existsSync(abs)).toBe(false);
  });

  it('skips hard links (even to a file outside) and device nodes', async () => {
    const secret = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-secret-')), 'secret');
    writeFileSync(secret, 'host secret');
    const r = await extract([
      { name: 'hard', type: 'link', linkname: secret },
      { name: 'dev', type: 'character-device', devmajor: 1, devminor: 3 },
      { name: 'ok.txt', type: 'file', body: 'fine' },
    ]);
    expect(r.error).toBeUndefined();
    expect(readdirSync(r.dest).sort()).toEqual(['ok.txt']);
    expect(readFileSync(secret, 'utf8')).toBe('host secret');
  });

  it('extracts a name with a newline as that name, inside the folder', async () => {
    const r = await extract([{ name: 'a\nb.txt', type: 'file', body: 'x' }]);
    expect(r.error).toBeUndefined();
    expect(readdirSync(r.dest)).toEqual(['a\nb.txt']);
    expect(lstatSync(path.join(r.dest, 'a\nb.txt')).isFile()).toBe(true);
  });

  it('keeps an in-folder symlink as a link (never followed at extraction)', async () => {
    const r = await extract([
      { name: 'target.txt', type: 'file', body: 't' },
      { name: 'link', type: 'symlink', linkname: 'target.txt' },
    ]);
    expect(r.error).toBeUndefined();
    expect(lstatSync(path.join(r.dest, 'link')).isSymbolicLink()).toBe(true);
  });

  it('refuses bytes that differ from the job hash and leaves no folder behind', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-hash-'));
    const dest = path.join(root, 'repo');
    const bytes = await tarOf([{ name: 'x.txt', type: 'file', body: 'swapped' }]);
    const job = { name: 'run_x.tar', sha256: 'b'.repeat(64), bytes: bytes.length };
    await expect(extractSnapshot(storeHolding(bytes), job, dest)).rejects.toThrow(/does not match its job/);
    expect(readdirSync(root)).toEqual([]);
  });
});
