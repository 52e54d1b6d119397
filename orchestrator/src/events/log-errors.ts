import { GatehouseError } from '../errors';
import type { BadEvent, ScanResult } from './scan';

/** Why a run's log is refused: data that does not fit its schema, a corrupt file, a newer schema. */

/** Data that does not fit its event type's schema: a bug in the code that appends, not bad input. */
export class EventDataError extends GatehouseError {
  readonly kind = 'internal';
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'EventDataError';
  }
}

/** The log on disk cannot be trusted: the open is refused. */
export class EventLogCorruptError extends GatehouseError {
  readonly kind = 'refused';
  constructor(
    readonly file: string,
    readonly bad: BadEvent,
    readonly runId: string,
  ) {
    super(
      `event log ${file} is corrupt at line ${bad.line}${bad.seq !== undefined ? ` (seq ${bad.seq})` : ''}: ` +
        `${bad.reason}. ` +
        `Refusing to append to it. Run \`gatehouse verify ${runId}\` to inspect it.`,
    );
    this.name = 'EventLogCorruptError';
  }
}

/** A log with a bad line (other than a torn last one) is refused: corrupt, or of a newer schemaVersion. */
export function refuseUnreadable(file: string, runId: string, bad: ScanResult['firstBad']): void {
  if (!bad || bad.kind === 'torn') return;
  // Not corrupt as far as this gatehouse can tell: it says which one can read it.
  if (bad.kind === 'newer')
    throw new LogSchemaTooNewError(`run ${runId}: event log ${file}, line ${bad.line}: ${bad.reason}`);
  throw new EventLogCorruptError(file, bad, runId);
}

/** A log written by a newer gatehouse (a schemaVersion this one does not know): not corrupt, not readable here. */
export class LogSchemaTooNewError extends GatehouseError {
  readonly kind = 'refused';
  constructor(message: string) {
    super(message);
    this.name = 'LogSchemaTooNewError';
  }
}
