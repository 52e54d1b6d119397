import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import type { EventEnvelope } from '@gatehouse/shared';
import { ARTIFACT_REF } from './artifacts';

/**
 * Every artifact a log refers to, re-hashed from disk. From schemaVersion 2 the completion event
 * records each artifact's full SHA-256 (under the event's MAC); older events name only its first
 * 16 hex digits (the ref), which is all that can be compared for them.
 */

export interface ArtifactProblem {
  ref: string;
  /** The first event that refers to it. */
  seq: number;
  reason: string;
}

export interface ArtifactCheck {
  /** Artifacts re-hashed and found as recorded. */
  checked: number;
  /** Of those, how many against a full SHA-256 (the rest: against the 64-bit prefix in the ref only). */
  full: number;
  bad: ArtifactProblem[];
}

interface Expected {
  seq: number;
  sha256?: string;
  bytes?: number;
}

function referenced(events: readonly EventEnvelope[]): Map<string, Expected> {
  const refs = new Map<string, Expected>();
  const note = (ref: string, seq: number, full?: { sha256: string; bytes: number }): void => {
    const known = refs.get(ref) ?? { seq };
    if (full && known.sha256 === undefined) Object.assign(known, full);
    refs.set(ref, known);
  };
  for (const e of events) {
    if (e.type === 'tool.execution.completed') {
      const d = e.data;
      for (const a of d.artifacts ?? []) note(a.ref, e.seq, { sha256: a.sha256, bytes: a.bytes });
      for (const ref of d.artifactRefs) note(ref, e.seq);
    } else if (e.type === 'tool.observation') {
      const ref = e.data.artifactRef;
      if (ref !== undefined) note(ref, e.seq);
    }
  }
  return refs;
}

function sha256OfFile(file: string): { sha256: string; bytes: number } {
  const fd = openSync(file, 'r');
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    let bytes = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      bytes += n;
    }
    return { sha256: h.digest('hex'), bytes };
  } finally {
    closeSync(fd);
  }
}

export function checkArtifacts(runDir: string, artifactsDir: string, events: readonly EventEnvelope[]): ArtifactCheck {
  const result: ArtifactCheck = { checked: 0, full: 0, bad: [] };
  for (const [ref, want] of referenced(events)) {
    const bad = (reason: string): void => void result.bad.push({ ref, seq: want.seq, reason });
    if (!ARTIFACT_REF.test(ref)) {
      bad(`event ${want.seq} refers to ${JSON.stringify(ref)}, which is not an artifact ref`);
      continue;
    }
    const file = path.join(artifactsDir, ref);
    let st;
    try {
      st = lstatSync(file);
    } catch {
      bad(`artifact ${ref} (event ${want.seq}) is missing from ${path.relative(runDir, artifactsDir)}: it was deleted`);
      continue;
    }
    if (!st.isFile()) {
      const what = st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
      bad(`artifact ${ref} (event ${want.seq}) is ${what}: the store writes only regular files`);
      continue;
    }
    const got = sha256OfFile(file);
    if (want.sha256 !== undefined) {
      if (got.sha256 !== want.sha256 || got.bytes !== want.bytes) {
        bad(
          `artifact ${ref} (event ${want.seq}) was changed: its SHA-256 is ${got.sha256} (${got.bytes} bytes), ` +
            `the event recorded ${want.sha256} (${want.bytes} bytes)`,
        );
        continue;
      }
      result.full++;
    } else if (!ref.endsWith(got.sha256.slice(0, 16))) {
      bad(`artifact ${ref} (event ${want.seq}) was changed: its SHA-256 now begins ${got.sha256.slice(0, 16)}`);
      continue;
    }
    result.checked++;
  }
  return result;
}
