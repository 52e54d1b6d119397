import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from 'nats';
import tar from 'tar-fs';
import { GatehouseError } from '../errors';
import { consumeObject } from '../store/index';
import type { Snapshot } from './job';

/** The snapshot of a repository could not be made, stored or taken back: the message says which and why. */
export class SnapshotError extends GatehouseError {
  readonly kind = 'environment';
}

/** Only these entries are ever extracted on a worker: no devices, fifos or hard links from a submitted tar. */
const EXTRACTED_TYPES: ReadonlySet<string> = new Set(['file', 'directory', 'symlink']);

/** Default bound on a snapshot: a repository bigger than this is refused at submit, before anything is queued. */
export const MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024;

/**
 * Puts the repository (its files and .git, as they are now, uncommitted changes included) into the
 * object store as a tar named after the run. The hash is taken over the bytes sent, so the worker
 * checks it got exactly what was submitted.
 */
export async function putSnapshot(
  store: ObjectStore,
  runId: string,
  repoDir: string,
  maxBytes = MAX_SNAPSHOT_BYTES,
): Promise<Snapshot> {
  const name = `${runId}.tar`;
  const hash = createHash('sha256');
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > maxBytes)
        return done(new SnapshotError(`the repository is over ${maxBytes} bytes as a tar; it is not submitted`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const packed = tar.pack(repoDir).pipe(counted);
  try {
    await store.put({ name }, Readable.toWeb(packed));
  } catch (e) {
    if (e instanceof SnapshotError) throw e;
    throw new SnapshotError(`storing the snapshot of ${repoDir} failed: ${(e as Error).message}`);
  }
  return { name, sha256: hash.digest('hex'), bytes };
}

/**
 * Extracts a run's snapshot to `dest` (which must not exist): into a sibling temporary folder
 * first, renamed into place only after the hash matched. Device files, fifos and hard links in the
 * tar are skipped; tar-fs keeps every entry inside the folder (no `..`, nothing through a link).
 */
export async function extractSnapshot(store: ObjectStore, snapshot: Snapshot, dest: string): Promise<void> {
  await fs.mkdir(path.dirname(dest), { recursive: true });
  let got: true | null;
  try {
    // Bounded: a stream that stalls (its node frozen or failing over) is read again from the start.
    got = await consumeObject(store, snapshot.name, async (chunks) => {
      const tmp = `${dest}.partial-${randomBytes(4).toString('hex')}`;
      const hash = createHash('sha256');
      try {
        await pipeline(
          Readable.from(chunks),
          new Transform({
            transform(chunk: Buffer, _enc, done) {
              hash.update(chunk);
              done(null, chunk);
            },
          }),
          tar.extract(tmp, { ignore: (_name, header) => !header || !EXTRACTED_TYPES.has(header.type) }),
        );
        const sha = hash.digest('hex');
        if (sha !== snapshot.sha256)
          throw new SnapshotError(
            `the snapshot ${snapshot.name} does not match its job (sha256 ${sha}, not ${snapshot.sha256})`,
          );
        await fs.rename(tmp, dest);
        return true as const;
      } finally {
        await fs.rm(tmp, { recursive: true, force: true });
      }
    });
  } catch (e) {
    if (e instanceof SnapshotError) throw e;
    throw new SnapshotError(`extracting the snapshot ${snapshot.name} failed: ${(e as Error).message}`);
  }
  if (!got)
    throw new SnapshotError(`the snapshot ${snapshot.name} is not in the object store (deleted, or never stored)`);
}
