import { z } from 'zod';
import { Id, Sha256Hex } from '../ids';
import type { EventDataOf, EventType } from './types';

/** Who caused an event. Model output is the model's; decisions are policy's or a person's. */
export const Actor = z.enum(['model', 'policy', 'user', 'runtime', 'sandbox']);
export type Actor = z.infer<typeof Actor>;

const Hash = Sha256Hex;
/** prevHash of a run's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * The log's schema version: the format events are written in now. It is the envelope's
 * `schemaVersion`, on every event (run.started included) and covered by its hash, rather than one
 * field of run.started: a log an older gatehouse began and a newer one resumed holds both versions.
 *
 * - 1: no `schemaVersion` field (logs written before keyed MACs): readers take a missing one as 1.
 * - 2: `schemaVersion: 2` and a keyed `mac` on every event.
 * - 3: the run's environment (shared/src/events/environment.ts): `setup.started`, `setup.command`,
 *   `setup.completed`, `setup.failed`, `preflight.completed`, `egress.allowed`, `egress.denied`; and
 *   the optional `run.started.tree`, `run.started.config` and `sandbox.started.notices`.
 * - 4: how an answer is judged and what a run spends (shared/src/events/verdict.ts, price.ts): `run.check`;
 *   `run.feedback.kind` and `.claims`; `run.completed.decidedBy` and `.usage`; `model.output` usage
 *   `cachedInputTokens` and `costUsd`, `stopNote` and a tool call's `truncated`; `run.started.price`,
 *   `run.started.budgets.maxCostUsd` and `run.resumed.budgets`.
 * - 5: audit and replay (shared/src/events/replay.ts): `run.started.replay` and the events of a replay,
 *   `replay.turn`, `replay.decision`, `replay.divergence`, `replay.execution`, `replay.summary`;
 *   `model.request.stateSha256` and `.contextTokenBudget`; `tool.execution.completed.outputSha256`; and
 *   `model.request.contextSha256` is now taken over the canonical JSON of the request (keys sorted), so it
 *   can be rebuilt from the log (before 5: JSON in the model's key order).
 * - 6: plan mode (shared/src/events/plan.ts, `gatehouse plan`): `plan.created`, `plan.gate`, `task.started`,
 *   `task.completed`, `task.failed`, `failure.classified`, `recovery.applied`, `recovery.escalated`,
 *   `plan.completed`; `run.started.planMode`, `tool.intent.taskId`, the `tool.validation` stage `plan` (a
 *   call outside its task: a deviation), `approval.granted.changes` (a plan approved with changes) and
 *   `.choice` (the answer to an escalation, an approval request of tool `escalation` with no tool.intent),
 *   `approval.denied.clarify` (a question for the model, not a rejection).
 * - 7: memory across runs (shared/src/events/memory.ts, docs/memory.md): `memory.recalled` (the remembered
 *   records that entered the context) and `memory.stored` (a gated `remember` call's record). MCP tools'
 *   `mcp.listed` (shared/src/events/mcp.ts) was first written under 7 too.
 * - 8: MCP servers survive a resume (docs/mcp.md): `run.started.config.environment.mcp` (how each server is
 *   started, names of its env and headers only) and `mcp.resumed` (a resumed run's servers listed again and
 *   each tool compared with what the model was shown).
 *
 * A reader refuses an event of a version above this one (verify, show and resume all read through
 * orchestrator/src/events/scan.ts, which says which version is needed): the data schemas are strict,
 * so it could not tell a newer log from a tampered one. So anything that changes what is written (a
 * new event type, a new field in an envelope or in any event's data, a new meaning) raises this
 * number, and adds fixture logs under test/fixtures/logs/v<N>/ (see the README there).
 */
export const LOG_SCHEMA_VERSION = 8;

/**
 * The envelope every event shares. `hash` is the SHA-256 of the canonical JSON of every other
 * field but `mac` (prevHash included), so editing, removing or reordering any event breaks the
 * chain. From schemaVersion 2, `mac` is `<key id>:<HMAC-SHA256 of hash>` under the installation's
 * log key: a forger who recomputes the chain cannot recompute it.
 */
export const EventEnvelope = z.strictObject({
  id: z.string().min(1).max(128),
  runId: Id,
  seq: z.number().int().nonnegative(),
  ts: z.string().datetime({ offset: true }),
  type: z.string().min(1).max(64),
  actor: Actor,
  /** The event that led to this one (an intent for its validation, ...); null for roots. */
  causationId: z.string().max(128).nullable(),
  parentRunId: Id.nullable(),
  data: z.unknown(),
  prevHash: Hash,
  hash: Hash,
  schemaVersion: z.number().int().min(2).optional(),
  mac: z.string().max(128).optional(),
});
/**
 * An envelope as the schema above reads it from a line: `type` any string, `data` unchecked. The
 * reader (orchestrator/src/events/scan.ts) then checks `data` against its type's schema, and only
 * then is it an `EventEnvelope`.
 */
export type RawEventEnvelope = z.infer<typeof EventEnvelope>;

/** An envelope whose `data` is of its `type`. The JSON on disk is the same as for any envelope. */
type TypedEnvelope<T extends EventType> = Omit<RawEventEnvelope, 'type' | 'data'> & {
  type: T;
  data: EventDataOf<T>;
};

/**
 * Any event, as a union discriminated on `type`: `event.type === 'tool.observation'` narrows
 * `event.data` to that type's data. Only the types: the schema, and so the wire form, are unchanged.
 */
export type EventEnvelope = { [T in EventType]: TypedEnvelope<T> }[EventType];

/** An event of one type (or of one of several). */
export type EventOf<T extends EventType> = Extract<EventEnvelope, { type: T }>;

/** Whether `event` is of `type`, narrowing it (for the places that cannot use `switch (event.type)`). */
export function isEvent<T extends EventType>(event: EventEnvelope, type: T): event is EventOf<T> {
  return event.type === type;
}
