import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EventLogCorruptError } from '../events/log-errors';
import { EVENTS_FILE, runDir } from '../events/paths';
import { RunLog } from '../events/store';
import { readStoredRun, type StoreContext } from './materialize';
import type { RunReplica } from './run-replica';

/**
 * Sends the store what a command appended to a run's local copy (an answer to a paused run's
 * request, given where no worker holds it): the local log must extend the store's exactly; its new
 * events go out in order under the writer lock, each expecting the run's last stored sequence, so
 * a worker that wrote meanwhile fences this push instead of being forked. Returns how many went.
 */
export async function pushRun(
  ctx: StoreContext,
  replicaFor: (runId: string, o: { lastStreamSeq: number }) => RunReplica,
  stateDir: string,
  runId: string,
): Promise<number> {
  const stored = await readStoredRun(ctx, runId);
  const file = path.join(runDir(stateDir, runId), EVENTS_FILE);
  const local = readFileSync(file);
  if (local.length < stored.jsonl.length || !local.subarray(0, stored.jsonl.length).equals(stored.jsonl))
    throw new EventLogCorruptError(
      file,
      { line: 1, reason: `the local copy of run ${runId} is not the store's log plus new events; nothing was sent` },
      runId,
    );
  const lines = local.toString('utf8').split('\n').filter(Boolean);
  if (lines.length === stored.events.length) return 0;
  const replica = replicaFor(runId, { lastStreamSeq: stored.lastStreamSeq });
  const { log } = RunLog.open(stateDir, runId, { replica });
  try {
    for (let seq = stored.events.length; seq < lines.length; seq++) replica.append(seq, lines[seq]!);
    await log.flush();
  } finally {
    log.close();
  }
  return lines.length - stored.events.length;
}
