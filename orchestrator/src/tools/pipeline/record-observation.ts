import { nextObservationId } from '../../events/state';
import { frame } from '../observe/frame';
import { argsHashOf } from '../recorded-values';
import { record } from './record';
import type { ObservedCall, PipelineDeps, Observation } from './types';

export interface ObservationDraft {
  callId: string;
  tool: string;
  outcome: Observation['outcome'];
  body: string;
  causationId: string | null;
  external?: boolean;
  /** Where external content came from (frame.ts). */
  origin?: string;
  truncated?: boolean;
  artifactRef?: string;
  input?: unknown;
}

/**
 * The end of every call that is not left pending: the body framed with its provenance, recorded as
 * the call's one `tool.observation`, and returned as the log holds it.
 */
export function recordObservation(deps: PipelineDeps, o: ObservationDraft): ObservedCall {
  const id = nextObservationId(deps.tracker.state);
  const provenance = {
    observationId: id,
    tool: o.tool,
    outcome: o.outcome,
    argsHash: argsHashOf(o.input),
    at: new Date().toISOString(),
  };
  const content = frame(o.body, provenance, o.external ?? false, o.origin);
  const truncated = o.truncated ?? false;
  const event = record(
    deps,
    'tool.observation',
    'runtime',
    {
      callId: o.callId,
      observationId: id,
      tool: o.tool,
      outcome: o.outcome,
      content,
      truncated,
      ...(o.artifactRef ? { artifactRef: o.artifactRef } : {}),
    },
    o.causationId,
  );
  // What the log holds (after secret redaction) is what the model gets.
  const recorded = event.data;
  return {
    kind: 'observed',
    observation: {
      id,
      callId: o.callId,
      tool: o.tool,
      outcome: o.outcome,
      content: recorded.content,
      truncated,
      ...(o.artifactRef ? { artifactRef: o.artifactRef } : {}),
    },
  };
}
