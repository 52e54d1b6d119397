import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ObjectStore } from 'nats';
import { listObjects, readObject } from './bounded-reads';

/**
 * A run's files (artifacts, saved workspaces: everything in its folder but the log and the lock)
 * in the installation's object store, named `<runId>/<path in the run folder>`. A file already
 * uploaded with the same size and time is not sent again: artifacts and workspace blobs are named
 * by their content and never change.
 */
const SKIP = new Set(['events.jsonl', 'writer.lock']);

function walk(dir: string, rel = ''): string[] {
  let names: string[];
  try {
    names = readdirSync(path.join(dir, rel));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const r = rel ? `${rel}/${n}` : n;
    if (!rel && SKIP.has(n)) continue;
    if (n.startsWith('.tmp')) continue;
    const st = statSync(path.join(dir, r), { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...walk(dir, r));
    else if (st?.isFile()) out.push(r);
  }
  return out;
}

export class RunFiles {
  readonly #sent = new Map<string, string>();
  #seeded = false;

  constructor(
    readonly os: ObjectStore,
    readonly runId: string,
  ) {}

  /** Upload what is new or changed in the run folder since the last call. */
  async upload(runDir: string): Promise<number> {
    if (!this.#seeded) {
      // A resumed run: what an earlier writer uploaded is not sent again.
      for (const o of await listObjects(this.os))
        if (o.name.startsWith(`${this.runId}/`)) this.#sent.set(o.name, `${o.size}`);
      this.#seeded = true;
    }
    let n = 0;
    for (const rel of walk(runDir)) {
      const name = `${this.runId}/${rel}`;
      const file = path.join(runDir, rel);
      const st = statSync(file);
      const stamp = `${st.size}:${st.mtimeMs}`;
      const sent = this.#sent.get(name);
      if (sent === stamp || (sent === `${st.size}` && isContentNamed(rel))) continue;
      await this.os.putBlob({ name }, readFileSync(file));
      this.#sent.set(name, stamp);
      n++;
    }
    return n;
  }
}

/** Artifacts and workspace blobs are named by their hash: the same name is the same bytes. */
const isContentNamed = (rel: string): boolean => /[0-9a-f]{32,}/.test(path.basename(rel));

/** Download a run's files into its folder. Names that would leave the folder are refused. */
export async function downloadRunFiles(os: ObjectStore, runId: string, runDir: string): Promise<number> {
  let n = 0;
  for (const o of await listObjects(os)) {
    if (!o.name.startsWith(`${runId}/`) || o.deleted) continue;
    const rel = o.name.slice(runId.length + 1);
    const file = path.resolve(runDir, rel);
    if (rel === '' || SKIP.has(rel) || !file.startsWith(runDir + path.sep))
      throw new Error(`the store holds a file ${JSON.stringify(o.name)} that is not inside run ${runId}'s folder`);
    // The object store checks the SHA-256 digest of what it returns; a read that stalls fails, bounded.
    const data = await readObject(os, o.name);
    if (data === null) continue;
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, data);
    renameSync(tmp, file);
    n++;
  }
  return n;
}
