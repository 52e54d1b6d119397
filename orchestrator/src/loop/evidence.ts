import { workspaceKey, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';

/** What one observation of the run shows, as the log records it. */
export interface ObservationFacts {
  id: string;
  callId: string;
  tool: string;
  outcome: EventDataOf<'tool.observation'>['outcome'];
  /** bash: the command line, as validated. */
  command?: string;
  /** Calls that ran: the exit code (null when the process did not exit: killed, timed out). */
  exitCode?: number | null;
  /** Workspace paths this call changed (a delegate call: the files applied from its sub-agent). */
  changed: readonly string[];
}

/** The facts a final answer's claims are judged against. */
export interface Evidence {
  observations: ReadonlyMap<string, ObservationFacts>;
  /** Every workspace path a call of this run changed. */
  changed: ReadonlySet<string>;
  /** The run's configured check command, when it has one. */
  checkCommand?: string;
}

/**
 * Folds the facts of each observation from the run's log: nothing is taken from anywhere else.
 * The paths come from `tool.execution.completed` (the sandbox's list of what a call changed: a
 * write's or an edit's file, a command's changes found by comparing the workspace before and after);
 * a file changed and later changed back still counts as changed.
 */
export function evidenceFrom(events: readonly EventEnvelope[]): Evidence {
  const calls = new Map<string, { tool?: string; input?: unknown; exitCode?: number | null; changed: string[] }>();
  const call = (id: string) => calls.get(id) ?? calls.set(id, { changed: [] }).get(id)!;
  const observed: Array<EventDataOf<'tool.observation'>> = [];
  const changed = new Set<string>();
  let checkCommand: string | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'run.started': {
        const d = e.data;
        checkCommand = d.config?.environment?.check ?? checkCommand;
        break;
      }
      case 'tool.intent': {
        const d = e.data;
        Object.assign(call(d.callId), { tool: d.tool, input: d.input });
        break;
      }
      case 'tool.validation': {
        const d = e.data;
        if (d.ok && d.input !== undefined) call(d.callId).input = d.input;
        break;
      }
      case 'tool.execution.completed': {
        const d = e.data;
        const c = call(d.callId);
        c.exitCode = d.exitCode;
        for (const p of d.filesChanged) {
          const key = workspaceKey(p);
          c.changed.push(key);
          changed.add(key);
        }
        break;
      }
      case 'tool.observation':
        observed.push(e.data);
        break;
      default:
        break;
    }
  }
  const observations = new Map<string, ObservationFacts>();
  for (const o of observed) {
    const c = calls.get(o.callId);
    const command = o.tool === 'bash' ? commandOf(c?.input) : undefined;
    // A sub-agent's files reach this workspace through calls named after the delegate call.
    const applied =
      o.tool === 'delegate'
        ? [...calls].filter(([id]) => id.startsWith(`${o.callId}.`)).flatMap(([, x]) => x.changed)
        : [];
    observations.set(o.observationId, {
      id: o.observationId,
      callId: o.callId,
      tool: o.tool,
      outcome: o.outcome,
      ...(command !== undefined ? { command } : {}),
      ...(c && 'exitCode' in c ? { exitCode: c.exitCode ?? null } : {}),
      changed: [...new Set([...(c?.changed ?? []), ...applied])],
    });
  }
  return { observations, changed, ...(checkCommand ? { checkCommand } : {}) };
}

function commandOf(input: unknown): string | undefined {
  const command = (input as { command?: unknown } | undefined)?.command;
  return typeof command === 'string' ? command : undefined;
}
