/**
 * The soak's figures from the logs, pure: double executions and lost events of one run, from the
 * store's copy of its log and every local copy a worker left in its state directory.
 */
export interface SoakEvent {
  seq: number;
  ts: string;
  type: string;
  actor?: string;
  hash?: string;
  data: Record<string, unknown>;
}

export interface RunEvidence {
  runId: string;
  /** The store's log (`gatehouse export RUN --store`); empty when it could not be read. */
  store: SoakEvent[];
  /** Whether `gatehouse verify RUN --store` accepted it. */
  verified: boolean;
  /** Each worker state directory's copy of the run (those that have one), torn last lines dropped. */
  locals: SoakEvent[][];
  /** The queue's record says the run completed. */
  completedPerQueue: boolean;
}

export interface RunFigures {
  runId: string;
  doubleExecutions: number;
  lostEvents: number;
  /** Events only a local copy holds, past its last flush, never acted on (re-derived by the next attempt). */
  unflushedLocal: number;
  /** run.resumed events in the store's log: a takeover by another worker (or a retry) each. */
  resumes: number;
  /** run.resumed of actor `runtime`: a lost sandbox replaced by a fresh one in the same run child. */
  sandboxReplacements: number;
  /** Why each lost event counts, for the report. */
  lost: string[];
}

const STARTED = 'tool.execution.started';
const COMPLETED = 'tool.execution.completed';
const callOf = (e: SoakEvent): string => String(e.data.callId);
/** One event, however many copies hold it: its hash (seq and time for an unhashed fixture). */
const identity = (e: SoakEvent): string => e.hash ?? `${e.seq}@${e.ts}`;

/**
 * doubleExecutions: per call, the distinct execution starts that ran: the store's, and a local
 * copy's that never reached the store but was acted on (its copy has the call's
 * tool.execution.completed after it), minus one. A start only in a local copy and not followed by
 * its completion never ran: execute.ts appends it, then waits for the store (flush) before invoking,
 * and that flush never returned (a killed worker, a store that did not answer).
 * lostEvents:
 *   - seq gaps in the store's log (an event the chain should have and lacks);
 *   - a run the queue calls completed whose store log has no run.completed;
 *   - an acted-on start only a local copy holds ("nothing acts before the store has it" broken);
 *   - a store log that does not verify or cannot be read: the local events beyond it up to the last
 *     acted-on one (those must have been flushed).
 * Local events past the last flush that nothing acted on are counted apart (unflushedLocal), not as
 * lost: the run is specified to re-derive them (docs/event-store.md), and the takeover does.
 */
export function runFigures(r: RunEvidence): RunFigures {
  const lost: string[] = [];
  const seqs = new Set(r.store.map((e) => e.seq));
  const top = r.store.length ? Math.max(...seqs) : -1;
  for (let s = 0; s <= top; s++) if (!seqs.has(s)) lost.push(`store lacks seq ${s}`);
  if (r.completedPerQueue && r.store.at(-1)?.type !== 'run.completed')
    lost.push('the queue says completed; the store log has no run.completed');

  const inStore = new Set(r.store.map(identity));
  const starts = new Map<string, Set<string>>();
  const add = (e: SoakEvent) =>
    (starts.get(callOf(e)) ?? starts.set(callOf(e), new Set()).get(callOf(e))!).add(identity(e));
  for (const e of r.store) if (e.type === STARTED) add(e);
  let unflushedLocal = 0;
  for (const local of r.locals) {
    const completed = local.filter((e) => e.type === COMPLETED);
    const acted = (e: SoakEvent) => completed.some((c) => callOf(c) === callOf(e) && c.seq > e.seq);
    let lastActed = -1;
    for (const e of local) {
      if (inStore.has(identity(e))) continue;
      if (e.type === STARTED && acted(e)) {
        add(e);
        lastActed = Math.max(lastActed, ...completed.filter((c) => callOf(c) === callOf(e)).map((c) => c.seq));
        lost.push(`execution of ${callOf(e)} ran (local seq ${e.seq}) and is not in the store`);
      }
    }
    if (!r.verified)
      for (let s = r.store.length; s <= lastActed; s++)
        lost.push(`store log does not verify; a local copy has seq ${s}`);
    unflushedLocal = Math.max(
      unflushedLocal,
      local.filter((e) => !inStore.has(identity(e)) && e.seq > lastActed).length,
    );
  }
  let doubleExecutions = 0;
  for (const ids of starts.values()) doubleExecutions += Math.max(0, ids.size - 1);
  const resumed = r.store.filter((e) => e.type === 'run.resumed');
  const sandboxReplacements = resumed.filter((e) => e.actor === 'runtime').length;
  const resumes = resumed.length - sandboxReplacements;
  return {
    runId: r.runId,
    doubleExecutions,
    lostEvents: lost.length,
    unflushedLocal,
    resumes,
    sandboxReplacements,
    lost,
  };
}

/** Runs per minute from the first submit to the last run.completed. */
export function runsPerMinute(runs: number, firstSubmitMs: number, lastCompletedMs: number): number {
  const minutes = (lastCompletedMs - firstSubmitMs) / 60_000;
  return minutes > 0 ? Math.round((runs / minutes) * 100) / 100 : 0;
}

/** Parses JSONL, dropping a torn last line (a process killed mid-write). */
export function parseEvents(text: string): SoakEvent[] {
  const out: SoakEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as SoakEvent);
    } catch {
      break;
    }
  }
  return out;
}
