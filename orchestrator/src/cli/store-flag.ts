import type { Command } from 'commander';
import { LogKey } from '../events/key';
import { resolveStateDir } from '../events/paths';
import { RunLog } from '../events/store';
import { chosenStore, openEventStore, type EventStore } from '../store/index';

/**
 * `--store nats://HOST:PORT` (or GATEHOUSE_STORE): the JetStream event store (docs/event-store.md).
 * A command that reads a run pulls it from the store into its state directory first (verified, as
 * `verify` checks a log), then works on that copy unchanged; `run` and `resume` write through to it.
 */
export const STORE_HELP = 'the JetStream event store, nats://HOST:PORT (default $GATEHOUSE_STORE; none: local only)';

/** The commands that read one run (their first argument) or, for `runs`, every run. */
const PULLS_RUN = new Set(['show', 'verify', 'report', 'replay', 'resume']);

/** The chosen store, opened with the installation's key; undefined when none is chosen. */
export async function openChosenStore(flag: string | undefined, stateDir: string): Promise<EventStore | undefined> {
  const url = chosenStore(flag);
  return url ? openEventStore(url, LogKey.load({ stateDir })) : undefined;
}

/** Before a reading command runs: the run (or every run, for `runs`) pulled from the chosen store. */
export function pullBeforeReading(program: Command): void {
  program.hook('preAction', async (_root, action) => {
    const name = action.name();
    if (!PULLS_RUN.has(name) && name !== 'runs') return;
    if (!action.options.some((o) => o.long === '--store')) return;
    const o = action.opts<{ store?: string; stateDir?: string }>();
    const stateDir = resolveStateDir(o.stateDir);
    const store = await openChosenStore(o.store, stateDir);
    if (!store) return;
    try {
      const runs = name === 'runs' ? await store.listRuns() : [String(action.processedArgs[0] ?? action.args[0])];
      for (const runId of runs) await store.materializeRun(stateDir, runId);
    } finally {
      await store.close();
    }
  });
}

/** The commands that answer a paused run (and `approvals`, which lists what there is to answer). */
const ANSWERS = new Set(['approve', 'deny', 'reject', 'ask', 'decide', 'approvals']);

/** At most this many runs of one tree are pulled for an answer (a sub-agent's request is answered in its own log). */
const MAX_TREE_RUNS = 64;

/**
 * Answering a paused run held in the store, from any machine: before the command, the run and its
 * sub-agents are pulled into the state directory; after it, what the command appended (the answer)
 * is pushed to the store, fenced like any writer, so the worker that resumes the run sees it.
 */
export function answerThroughStore(program: Command): void {
  let pending: { store: EventStore; stateDir: string; before: Map<string, number> } | undefined;
  program.hook('preAction', async (_root, action) => {
    if (!ANSWERS.has(action.name()) || !action.options.some((o) => o.long === '--store')) return;
    const o = action.opts<{ store?: string; stateDir?: string }>();
    const stateDir = resolveStateDir(o.stateDir);
    const store = await openChosenStore(o.store, stateDir);
    if (!store) return;
    const before = new Map<string, number>();
    const queue = [String(action.processedArgs[0] ?? action.args[0])];
    while (queue.length > 0 && before.size < MAX_TREE_RUNS) {
      const runId = queue.shift()!;
      if (before.has(runId)) continue;
      await store.materializeRun(stateDir, runId);
      const events = RunLog.readEvents(stateDir, runId);
      before.set(runId, events.length);
      for (const e of events) if (e.type === 'agent.spawned') queue.push(e.data.childRunId);
    }
    pending = { store, stateDir, before };
  });
  program.hook('postAction', async () => {
    const p = pending;
    pending = undefined;
    if (!p) return;
    try {
      for (const [runId, n] of p.before)
        if (RunLog.readEvents(p.stateDir, runId).length > n) await p.store.pushRun(p.stateDir, runId);
    } finally {
      await p.store.close();
    }
  });
}
