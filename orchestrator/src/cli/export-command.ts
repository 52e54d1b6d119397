import { readFileSync, writeFileSync } from 'node:fs';
import { resolveRun } from '../events/run-ref';
import { resolveStateDir, eventsFile } from '../events/paths';
import { refuseUnreadable } from '../events/log-errors';
import { scanLog } from '../events/scan';
import { openChosenStore } from './store-flag';

/**
 * `gatehouse export RUN [--out FILE]`: the run's log as JSONL, exactly the bytes of its
 * events.jsonl; with a store, read from JetStream and verified on the way. Torn last lines are not exported.
 */
export async function exportCommand(
  ref: string,
  o: { store?: string; stateDir?: string; out?: string },
): Promise<number> {
  let jsonl: Buffer;
  const store = await openChosenStore(o.store, resolveStateDir(o.stateDir));
  if (store) {
    try {
      jsonl = await store.exportRun(ref);
    } finally {
      await store.close();
    }
  } else {
    const { stateDir, runId } = resolveRun(ref, { stateDir: o.stateDir });
    const file = eventsFile(stateDir, runId);
    const buf = readFileSync(file);
    const scan = scanLog(buf, { runId });
    refuseUnreadable(file, runId, scan.firstBad);
    jsonl = buf.subarray(0, scan.goodBytes);
  }
  if (o.out) writeFileSync(o.out, jsonl);
  else process.stdout.write(jsonl);
  return 0;
}
