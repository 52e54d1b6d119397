import { describe, expect, expectTypeOf, it } from 'vitest';
import { EventData, EventEnvelope, isEvent, type EventDataOf, type EventOf } from '../src/index';

/** A stored tool.observation line's fields, as the log holds them. */
const observation = {
  id: 'evt-run_a-3',
  runId: 'run_a',
  seq: 3,
  ts: '2026-01-01T00:00:00.000Z',
  type: 'tool.observation',
  actor: 'runtime',
  causationId: null,
  parentRunId: null,
  data: { callId: 'call_1', observationId: 'obs-1', tool: 'bash', outcome: 'ok', content: 'hi', truncated: false },
  prevHash: 'a'.repeat(64),
  hash: 'b'.repeat(64),
  schemaVersion: 2,
  mac: 'k:m',
} as const;

describe('EventEnvelope: a union discriminated on type', () => {
  it('narrows data by the type, in a switch and through isEvent', () => {
    const e = EventEnvelope.parse(observation) as EventEnvelope;
    expect(isEvent(e, 'tool.observation')).toBe(true);
    expect(isEvent(e, 'tool.intent')).toBe(false);
    if (isEvent(e, 'tool.observation')) {
      expectTypeOf(e.data).toEqualTypeOf<EventDataOf<'tool.observation'>>();
      expect(e.data.observationId).toBe('obs-1');
    }
    switch (e.type) {
      case 'tool.observation':
        expectTypeOf(e).toEqualTypeOf<EventOf<'tool.observation'>>();
        expectTypeOf(e.data.outcome).toEqualTypeOf<'ok' | 'failed' | 'rejected' | 'denied' | 'pending'>();
        break;
      case 'run.started':
        expectTypeOf(e.data.task).toBeString();
        break;
    }
    // A type that does not exist is not a case of the union.
    // @ts-expect-error 'tool.nothing' is not an EventType
    expect(isEvent(e, 'tool.nothing')).toBe(false);
  });

  it('reads every stored envelope field as it was: the schema, and so what is hashed, did not change', () => {
    const parsed = EventEnvelope.parse(observation);
    expect(parsed).toEqual(observation);
    expect(EventData['tool.observation'].parse(parsed.data)).toEqual(observation.data);
  });
});
