import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventDataOf } from '@gatehouse/shared';
import { LOG_SCHEMA_VERSION } from '@gatehouse/shared';
import { Redactor, RunLog, sealEvent, verifyLog } from '../orchestrator/src/events/index';
import { LogKey } from '../orchestrator/src/events/key';

/**
 * The event store's cost per event, measured in one run: append throughput with the default
 * durability (one write(2) per event, fsync only at sync points) beside fsync on every append, and
 * how long `verifyLog` takes over a long log. Each append validates, redacts (with this process's
 * environment), seals, MACs and writes, as in a real run. The anchoring's own costs are measured
 * apart: one event MAC, and a sync() after a single append (fsync of the log, then the head's
 * write, fsync and rename).
 */
const N = { warmup: 500, append: 50_000, fsync: 2_000, verify: 100_000 };

function completed(i: number): EventDataOf<'tool.execution.completed'> {
  return {
    callId: `call_${i}`,
    invocationId: `inv_${i.toString(36)}_3f9a1c`,
    status: i % 10 === 0 ? 'failed' : 'ok',
    exitCode: i % 10 === 0 ? 1 : 0,
    signal: null,
    durationMs: 40 + (i % 300),
    bytes: 1000 + i,
    truncated: false,
    filesChanged: i % 3 === 0 ? ['src/index.ts'] : [],
    artifactRefs: [`art-${(i * 2654435761).toString(16).padStart(16, '0').slice(-16)}`],
    fileHashes: { 'src/index.ts': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  };
}

interface Rate {
  n: number;
  ms: number;
  perSecond: number;
  usPerEvent: number;
}

function timeAppends(log: RunLog, from: number, n: number): Rate {
  const t = performance.now();
  for (let i = from; i < from + n; i++) log.append('tool.execution.completed', 'sandbox', completed(i));
  const ms = performance.now() - t;
  return {
    n,
    ms: Math.round(ms),
    perSecond: Math.round((n / ms) * 1000),
    usPerEvent: Math.round((ms / n) * 10_000) / 10,
  };
}

/** Appends with the default durability; returns once the log is closed, so its events are garbage. */
function appendPhase(
  dir: string,
  redactor: Redactor,
  key: LogKey,
): { rate: Rate; syncMs: number; file: string; seq: number; lastHash: string } {
  const log = RunLog.create(dir, 'bench', { redactor, key });
  timeAppends(log, 0, N.warmup);
  const rate = timeAppends(log, N.warmup, N.append);
  const t = performance.now();
  log.sync();
  const syncMs = Math.round((performance.now() - t) * 100) / 100;
  log.close();
  return { rate, syncMs, file: log.file, seq: log.events().length, lastHash: log.lastHash };
}

/**
 * Extend the chain to N.verify events by sealing directly: appending through the store would only measure append again.
 */
function fillTo(file: string, fromSeq: number, prevHash: string, key: LogKey): void {
  const ts = new Date().toISOString();
  let chunk: string[] = [];
  for (let seq = fromSeq; seq < N.verify; seq++) {
    const e = {
      id: `evt-bench-${seq}`,
      runId: 'bench',
      seq,
      ts,
      type: 'tool.execution.completed',
      actor: 'sandbox' as const,
      causationId: null,
      parentRunId: null,
      data: completed(seq),
      prevHash,
    };
    const sealed = sealEvent({ ...e, schemaVersion: LOG_SCHEMA_VERSION }, (h) => key.macEvent(h));
    chunk.push(sealed.line);
    prevHash = sealed.hash;
    if (chunk.length === 10_000 || seq === N.verify - 1) {
      appendFileSync(file, `${chunk.join('\n')}\n`);
      chunk = [];
    }
  }
}

export async function benchEvents(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-events-'));
  try {
    const redactor = Redactor.fromEnv(process.env);
    // A bench key with its heads beside the state directory, not in it (and not the user's key).
    const keyDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-key-'));
    dirs.push(keyDir);
    const key = LogKey.fromBytes(randomBytes(32), {
      keyFile: path.join(keyDir, 'log.key'),
      headsDir: path.join(keyDir, 'heads'),
    });
    const appended = appendPhase(dir, redactor, key);
    fillTo(appended.file, appended.seq, appended.lastHash, key);
    const bytes = statSync(appended.file).size;
    const t = performance.now();
    const v = verifyLog(appended.file, { key });
    const verifyMs = performance.now() - t;
    if (!v.ok || v.events !== N.verify) throw new Error(`bench log did not verify: ${JSON.stringify(v)}`);

    const durable = RunLog.create(dir, 'bench-fsync', { redactor, fsyncEachAppend: true, key });
    const fsynced = timeAppends(durable, 0, N.fsync);
    durable.close();
    const anchoring = anchoringCost(dir, redactor, key);

    return {
      event: { type: 'tool.execution.completed', lineBytes: Math.round(bytes / N.verify) },
      append: { ...appended.rate, durability: 'one write(2) per event; fsync at sync points' },
      appendFsyncEach: { ...fsynced, durability: 'fsync after every append' },
      fsyncSlowdown: Math.round((appended.rate.perSecond / fsynced.perSecond) * 10) / 10,
      syncMs: appended.syncMs,
      anchoring,
      verify: {
        events: N.verify,
        ms: Math.round(verifyMs),
        eventsPerSecond: Math.round((N.verify / verifyMs) * 1000),
        mbPerSecond: Math.round(bytes / 1000 / verifyMs),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

const dirs: string[] = [];

/** What anchoring adds: an HMAC per event, and a head write per sync (which runs before each side effect). */
function anchoringCost(dir: string, redactor: Redactor, key: LogKey): Record<string, unknown> {
  const hash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  for (let i = 0; i < 5_000; i++) key.macEvent(hash);
  const n = 100_000;
  let t = performance.now();
  for (let i = 0; i < n; i++) key.macEvent(hash);
  const macUs = ((performance.now() - t) * 1000) / n;
  const log = RunLog.create(dir, 'bench-sync', { redactor, key });
  const syncs: number[] = [];
  for (let i = 0; i < 50; i++) {
    log.append('tool.execution.completed', 'sandbox', completed(i));
    t = performance.now();
    log.sync();
    syncs.push(performance.now() - t);
  }
  log.close();
  syncs.sort((a, b) => a - b);
  return {
    macUsPerEvent: Math.round(macUs * 100) / 100,
    syncAfterOneAppendMs: {
      p50: Math.round(syncs[25]! * 100) / 100,
      p90: Math.round(syncs[45]! * 100) / 100,
      note: 'log fsync + head write, fsync, rename',
    },
  };
}
