import type { EventEnvelope } from '@gatehouse/shared';

/**
 * Event envelopes for the telemetry tests, as the log writes them (hashes are not checked here):
 * `at(ms)` stamps an event that many milliseconds after `base`.
 */
export function eventWriter(base: number) {
  const seqs = new Map<string, number>();
  return function ev(
    runId: string,
    parentRunId: string | null,
    atMs: number,
    type: EventEnvelope['type'],
    data: unknown,
  ): EventEnvelope {
    const seq = seqs.get(runId) ?? 0;
    seqs.set(runId, seq + 1);
    return {
      id: `${runId}-${seq}`,
      runId,
      seq,
      ts: new Date(base + atMs).toISOString(),
      type,
      actor: 'runtime',
      causationId: null,
      parentRunId,
      data,
      prevHash: '0'.repeat(64),
      hash: '1'.repeat(64),
    } as EventEnvelope;
  };
}

export const HASH = 'a'.repeat(64);
