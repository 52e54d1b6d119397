import { LOG_SCHEMA_VERSION } from '@gatehouse/shared';

/**
 * What a reader does with an event's `schemaVersion` (the policy is written beside
 * LOG_SCHEMA_VERSION in shared/src/events/envelope.ts): missing is version 1; 1 to
 * LOG_SCHEMA_VERSION are read; a higher one is refused, with the version that is needed.
 */

/** The version of a parsed log line: its `schemaVersion`, 1 when it has none. */
export function schemaVersionOf(line: unknown): unknown {
  if (typeof line !== 'object' || line === null || !('schemaVersion' in line)) return 1;
  return line.schemaVersion;
}

/**
 * Why this gatehouse cannot read a line of this version, or undefined when it can. Checked before
 * the envelope's schema: a newer format may add fields this one's strict schema would call tampering.
 */
export function newerSchemaReason(line: unknown): string | undefined {
  const v = schemaVersionOf(line);
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= LOG_SCHEMA_VERSION) return undefined;
  return (
    `schemaVersion ${v} is newer than this gatehouse reads (1 to ${LOG_SCHEMA_VERSION}): the log was written ` +
    `by a newer gatehouse. Use a gatehouse that reads log schemaVersion ${v} to verify, show or resume it ` +
    '(this one cannot check it, nor tell whether it was modified)'
  );
}
