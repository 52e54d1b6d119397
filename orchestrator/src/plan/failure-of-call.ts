import type { EventEnvelope } from '@gatehouse/shared';
import type { Observation } from '../tools/pipeline';
import type { FailureInput } from './plan-types';

/** A call that did not succeed as the classifier sees it: its observation, where validation refused it, how it ran. */
export function failureOfCall(
  observation: Observation & { outcome: Exclude<Observation['outcome'], 'ok'> },
  events: readonly EventEnvelope[],
): FailureInput {
  let stage: Extract<FailureInput, { kind: 'call' }>['stage'];
  let status: string | undefined;
  let exitCode: number | null | undefined;
  for (const e of events) {
    if (e.type === 'tool.validation' && e.data.callId === observation.callId && !e.data.ok) stage = e.data.stage;
    if (e.type === 'tool.execution.completed' && e.data.callId === observation.callId) {
      status = e.data.status;
      exitCode = e.data.exitCode;
    }
  }
  return {
    kind: 'call',
    tool: observation.tool,
    outcome: observation.outcome,
    content: observation.content,
    ...(stage ? { stage } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(exitCode !== undefined ? { exitCode } : {}),
  };
}
