import { promises as fs } from 'node:fs';
import path from 'node:path';
import { canonicalJson, type EventEnvelope } from '@gatehouse/shared';
import type { LogKey } from '../events/key';
import { writeAtomic } from './workspace-save';

/**
 * What vouches for a reaper salvage (`workspace/salvage-SEQ.json`): a record beside it naming the
 * run (its id and the hash of its first event), the log position the salvage follows (seq and
 * hash of the last event then) and the manifest's sha256, under a MAC of the installation key, the
 * same key and MAC as a run's head (heads.ts; the `record` field keeps the two from being taken
 * for one another). A checkpoint is vouched for by its MAC'd `workspace.checkpoint` event; a
 * salvage is made when no orchestrator holds the log, so it gets this record instead. Whoever can
 * write the run's folder but not read the key cannot make one: a planted salvage is not restored.
 */
const RECORD = 'gatehouse workspace salvage v1';

export interface SalvageRecord {
  record: typeof RECORD;
  runId: string;
  firstHash: string;
  afterSeq: number;
  afterHash: string;
  /** The manifest, relative to the run's folder. */
  manifest: string;
  manifestSha256: string;
  keyId: string;
}

const FIELDS = ['record', 'runId', 'firstHash', 'afterSeq', 'afterHash', 'manifest', 'manifestSha256', 'keyId'];

/** `workspace/salvage-12.json` is vouched for by `workspace/salvage-12.mac.json`. */
export function salvageRecordFile(manifestFile: string): string {
  return manifestFile.replace(/\.json$/, '.mac.json');
}

export type SalvageVouch = Omit<SalvageRecord, 'record' | 'keyId'>;

export async function writeSalvageRecord(key: LogKey, runDir: string, vouch: SalvageVouch): Promise<string> {
  const rec: SalvageRecord = { record: RECORD, ...vouch, keyId: key.id };
  const file = salvageRecordFile(vouch.manifest);
  await writeAtomic(path.join(runDir, file), `${JSON.stringify({ ...rec, mac: key.macHead(canonicalJson(rec)) })}\n`);
  return file;
}

/**
 * The record for a salvage, checked: its MAC with this installation's key, that it names this run
 * (run id and first event as in the log) and this manifest, and that the log still has the event
 * it follows. The manifest's own hash is checked by whoever loads it, against `manifestSha256`.
 */
export async function checkSalvageRecord(
  key: LogKey | undefined,
  runDir: string,
  manifestFile: string,
  events: readonly EventEnvelope[],
): Promise<{ record: SalvageRecord } | { problem: string }> {
  const file = salvageRecordFile(manifestFile);
  if (!key) return { problem: `there is no installation key to check ${file} with` };
  const text = await fs.readFile(path.join(runDir, file), 'utf8').catch(() => undefined);
  if (text === undefined)
    return { problem: `nothing vouches for it (${file}, which the reaper writes with every salvage, is missing)` };
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { problem: `${file} is not JSON` };
  }
  const { mac, ...rest } = raw;
  const rec = rest as unknown as SalvageRecord;
  const keys = Object.keys(rest);
  if (rec.record !== RECORD || keys.length !== FIELDS.length || !FIELDS.every((f) => keys.includes(f))) {
    return { problem: `${file} is not a salvage record gatehouse writes` };
  }
  if (rec.keyId !== key.id || typeof mac !== 'string' || !key.checkHeadMac(canonicalJson(rec), mac)) {
    return {
      problem: `${file} does not verify with this installation's key: it was edited, planted or made elsewhere`,
    };
  }
  const first = events[0];
  if (!first || rec.runId !== first.runId || rec.firstHash !== first.hash)
    return { problem: `${file} was made for another run` };
  if (rec.manifest !== manifestFile) return { problem: `${file} vouches for ${rec.manifest}, not ${manifestFile}` };
  if (events[rec.afterSeq]?.hash !== rec.afterHash) {
    return { problem: `${file} follows event ${rec.afterSeq}, which the log does not have as it was then` };
  }
  return { record: rec };
}
