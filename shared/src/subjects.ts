import { Id } from './ids';

/**
 * Every NATS subject gatehouse uses, in one place. All subjects of a sandbox live under
 * `gh.<runId>.<sandboxId>.`, which is what a sandbox's credentials are scoped to.
 */
export const SUBJECT_ROOT = 'gh';

/**
 * The second token under a run that belongs to approvals, never to a sandbox. Reserving it keeps
 * every sandbox's subjects (`gh.<run>.<sandboxId>.…`, all its credentials allow) disjoint from
 * the approval subjects, so no sandbox can ever publish an answer or read a request.
 */
export const APPROVALS_TOKEN = 'approvals';

export interface SandboxSubjects {
  /** Everything of this sandbox; the orchestrator's view. */
  all: string;
  /** orchestrator -> daemon, request/reply: an approved invocation; the reply is its result. */
  invoke: string;
  /** orchestrator -> daemon: cancel an invocation in flight. */
  cancel: string;
  /** daemon -> orchestrator: sent once when the daemon can serve. */
  ready: string;
  /** daemon -> orchestrator: liveness, every heartbeat interval. */
  heartbeat: string;
  /** daemon -> orchestrator: streamed output of one invocation. */
  output: (invocationId: string) => string;
  /** wildcard over every invocation's output. */
  outputAll: string;
}

export function sandboxSubjects(runId: string, sandboxId: string): SandboxSubjects {
  Id.parse(runId);
  Id.parse(sandboxId);
  if (sandboxId === APPROVALS_TOKEN)
    throw new Error(`sandbox id "${APPROVALS_TOKEN}" is reserved for approval subjects`);
  const base = `${SUBJECT_ROOT}.${runId}.${sandboxId}`;
  return {
    all: `${base}.>`,
    invoke: `${base}.invoke`,
    cancel: `${base}.cancel`,
    ready: `${base}.ready`,
    heartbeat: `${base}.heartbeat`,
    output: (invocationId: string) => `${base}.output.${Id.parse(invocationId)}`,
    outputAll: `${base}.output.*`,
  };
}

/**
 * Where a pooled sandbox receives its run's identity at claim (request/reply, orchestrator ->
 * daemon). Disjoint from every sandbox's subjects by its last token (`identity` is none of
 * sandboxSubjects'), even for a run whose id were `_pool`.
 */
export function poolIdentitySubject(sandboxId: string): string {
  Id.parse(sandboxId);
  return `${SUBJECT_ROOT}._pool.${sandboxId}.identity`;
}

/** Where a pooled daemon says, once, that it listens on its identity subject (the pool then offers it). */
export function poolWaitingSubject(sandboxId: string): string {
  Id.parse(sandboxId);
  return `${SUBJECT_ROOT}._pool.${sandboxId}.waiting`;
}

/** What a sandbox's NATS user may do: subscribe to its inbound subjects, publish its outbound ones. */
export function sandboxPermissions(runId: string, sandboxId: string): { publish: string[]; subscribe: string[] } {
  const s = sandboxSubjects(runId, sandboxId);
  return { subscribe: [s.invoke, s.cancel], publish: [s.ready, s.heartbeat, s.outputAll] };
}

export interface ApprovalSubjects {
  /** orchestrator -> approvers: each new ApprovalPrompt, as JSON. */
  requests: string;
  /** approver -> orchestrator, request/reply: a signed answer to one request; the reply says accepted or why not. */
  answer: (requestId: string) => string;
  /** anyone -> orchestrator, request/reply: the requests still open (for a page that joins late). */
  pending: string;
}

/** Approvals of one run. Outside every sandbox's `gh.<run>.<sandboxId>.` space (see APPROVALS_TOKEN). */
export function approvalSubjects(runId: string): ApprovalSubjects {
  Id.parse(runId);
  const base = `${SUBJECT_ROOT}.${runId}.${APPROVALS_TOKEN}`;
  return {
    requests: `${base}.requests`,
    answer: (requestId: string) => `${base}.answer.${Id.parse(requestId)}`,
    pending: `${base}.pending`,
  };
}
