import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '@gatehouse/shared';
import { explicitStateDir, defaultStateRoot, type Env } from '../events/state-home';
import { LogKey } from '../events/key';
import { MemoryRecord } from './memory-record';

/** A record file that cannot be used: never read into a context, always reported. */
export interface RefusedRecord {
  file: string;
  reason: string;
}

export type RecordLookup =
  { kind: 'found'; record: MemoryRecord } | { kind: 'refused'; refused: RefusedRecord } | { kind: 'missing' };

const RECORD_FILE = /^(mem_[A-Za-z0-9_-]{1,60})\.json$/;

/** Far more than a record can hold (1,000 characters of text, 8 quotes of 500): a bigger file is not one. */
const MAX_RECORD_FILE_BYTES = 64 * 1024;

/**
 * The installation's memory: one file per record, `<state>/memory/<id>.json`, holding the record
 * and a MAC under the installation's log key (the one the event logs use, kept outside every state
 * directory). Whoever can write the state directory can delete a record but cannot make or change
 * one that is used: a file whose MAC does not verify, made with another key, whose name is not its
 * record's id or that does not parse is refused and reported, never used.
 */
export class MemoryStore {
  constructor(
    readonly dir: string,
    private readonly key: LogKey,
  ) {}

  /** The store of this installation: beside the runs (`--state-dir`, GATEHOUSE_STATE_DIR or the default root). */
  static forInstallation(o: { stateDir?: string | undefined; env?: Env } = {}): MemoryStore {
    const env = o.env ?? process.env;
    const root = explicitStateDir(o.stateDir, env) ?? defaultStateRoot(env);
    const dir = path.join(root, 'memory');
    return new MemoryStore(dir, LogKey.load({ env, stateDir: root }));
  }

  /** Writes a record (new file, 0600, fsynced, then renamed into place). */
  put(record: MemoryRecord): void {
    const checked = MemoryRecord.parse(record);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const text = canonicalJson(checked);
    const body = `${JSON.stringify({ record: checked, mac: this.key.macRecord(text) })}\n`;
    const tmp = path.join(this.dir, `.${checked.id}.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, body);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.fileOf(checked.id));
  }

  /** Every record whose MAC verifies, and every file refused (with why), in file name order. */
  read(): { records: MemoryRecord[]; refused: RefusedRecord[] } {
    const records: MemoryRecord[] = [];
    const refused: RefusedRecord[] = [];
    for (const file of this.files()) {
      const r = this.load(file);
      if (r.kind === 'found') records.push(r.record);
      else if (r.kind === 'refused') refused.push(r.refused);
    }
    return { records, refused };
  }

  get(id: string): RecordLookup {
    if (!RECORD_FILE.test(`${id}.json`)) return { kind: 'missing' };
    return this.load(`${id}.json`);
  }

  /** Removes a record's file (a refused one too); false when there is none. */
  forget(id: string): boolean {
    if (!RECORD_FILE.test(`${id}.json`)) return false;
    try {
      rmSync(this.fileOf(id));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
  }

  private fileOf(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  private files(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => RECORD_FILE.test(f))
        .sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }

  private load(file: string): RecordLookup {
    const full = path.join(this.dir, file);
    const refuse = (reason: string): RecordLookup => ({ kind: 'refused', refused: { file, reason } });
    let raw: string;
    try {
      // A link could stand for any file: records are the store's own regular files only.
      const st = lstatSync(full);
      if (!st.isFile()) return refuse('not a regular file');
      if (st.size > MAX_RECORD_FILE_BYTES)
        return refuse(`it is ${st.size} bytes; a record file is at most ${MAX_RECORD_FILE_BYTES}`);
      raw = readFileSync(full, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
      return refuse(`unreadable: ${(e as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return refuse('not JSON');
    }
    const { record, mac } = (parsed ?? {}) as { record?: unknown; mac?: unknown };
    const checked = MemoryRecord.safeParse(record);
    if (!checked.success || typeof mac !== 'string') return refuse('not a memory record');
    const verdict = this.key.checkRecordMac(canonicalJson(record), mac);
    if (verdict === 'foreign') return refuse("its MAC was not made with this installation's key");
    if (verdict === 'bad') return refuse('its MAC does not match: the record was changed after it was stored');
    if (`${checked.data.id}.json` !== file)
      return refuse(`it holds record ${checked.data.id}, not the one its name says`);
    return { kind: 'found', record: checked.data };
  }
}
