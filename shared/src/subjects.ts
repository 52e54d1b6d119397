import { Id } from './ids';

/**
 * Every NATS subject gatehouse uses, in one place. All subjects of a sandbox live under
 * `gh.<runId>.<sandboxId>.`, which is what a sandbox's credentials are scoped to.
 */
export const SUBJECT_ROOT = 'gh';

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

/** What a sandbox's NATS user may do: subscribe to its inbound subjects, publish its outbound ones. */
export function sandboxPermissions(runId: string, sandboxId: string): { publish: string[]; subscribe: string[] } {
  const s = sandboxSubjects(runId, sandboxId);
  return { subscribe: [s.invoke, s.cancel], publish: [s.ready, s.heartbeat, s.outputAll] };
}
