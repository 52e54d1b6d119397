import { createHash } from 'node:crypto';

/**
 * Trace and span ids derived from run ids, so that every process that works on a tree — the one
 * that started it and any that resume it later — puts its spans in the same trace, and the first
 * `invoke_agent` span of a run can be found from the run id alone:
 *
 * - trace id: the first 16 bytes of SHA-256("gatehouse.trace\0" + root run id);
 * - a run's span: the first 8 bytes of SHA-256("gatehouse.run\0" + run id + "\0" + seq), where seq is
 *   the seq of the first event this process wrote for the run (0 for a new run: its `run.started`).
 *
 * An all-zero id is invalid in OpenTelemetry; a hash that starts so is not a concern in practice,
 * but one is never returned (the last byte is set instead).
 */
export function traceIdFor(rootRunId: string): string {
  return nonZero(digest(`gatehouse.trace\0${rootRunId}`).slice(0, 32));
}

export function runSpanIdFor(runId: string, seq: number): string {
  return nonZero(digest(`gatehouse.run\0${runId}\0${seq}`).slice(0, 16));
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function nonZero(hex: string): string {
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}
