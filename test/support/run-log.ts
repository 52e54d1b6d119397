import { readFileSync } from 'node:fs';
import path from 'node:path';

/** An event as the CLI prints it (`--json`) and the log holds it, read loosely. */
export type LoggedEvent = { type: string; seq: number; actor: string; data: Record<string, unknown>; runId: string };

/** JSON lines (`gatehouse … --json` output, or an events.jsonl) as events. */
export const parseEvents = (text: string): LoggedEvent[] =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LoggedEvent);

/** A run's whole log, from its state directory. */
export const runLogOf = (stateDir: string, runId: string): LoggedEvent[] =>
  parseEvents(readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8'));
