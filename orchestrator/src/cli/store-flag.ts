import type { Command } from 'commander';
import { LogKey } from '../events/key';
import { resolveStateDir } from '../events/paths';
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
