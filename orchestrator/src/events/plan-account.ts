import { isEvent, type EventDataOf, type EventEnvelope, type PlanChanges, type PlanTask } from '@gatehouse/shared';

export type TaskStatus = 'completed' | 'failed' | 'skipped' | 'running' | 'pending';

/** One task of the approved plan (or of the proposed one, before a gate approved it), as it ended. */
export interface TaskAccount {
  id: string;
  title: string;
  dependsOn: string[];
  /** Its place in the approved plan (1-based; 0 for a task skipped at the gate). */
  index: number;
  total: number;
  status: TaskStatus;
  attempts: number;
  result?: string;
  error?: string;
  check?: { command: string; exitCode: number | null };
}

/** What a plan run's log tells about its plan: proposed, gated, executed, recovered, summed up. */
export interface PlanAccount {
  planId: string;
  /** How many plans passed validation (a revision after a rejection is the next). */
  plans: number;
  proposed: PlanTask[];
  dependencies: Array<[string, string]>;
  gate: Array<{ status: string; by?: string; changes?: PlanChanges; reason?: string }>;
  tasks: TaskAccount[];
  /** Calls rejected for being outside their task (validation stage `plan`). */
  deviations: Array<{ callId: string; taskId?: string; tool: string; message: string }>;
  failures: Array<EventDataOf<'failure.classified'>>;
  recoveries: Array<EventDataOf<'recovery.applied'>>;
  escalations: Array<{
    taskId: string;
    class: string;
    reason: string;
    requestId?: string;
    decision?: string;
    by?: string;
  }>;
  completed?: EventDataOf<'plan.completed'>;
}

/**
 * The plan of a run, folded from its log alone (show, the reports): the last plan that passed
 * validation, its gate, each task's end. Undefined for a run that is not a plan run or made no plan.
 */
export function planAccount(events: readonly EventEnvelope[]): PlanAccount | undefined {
  let a: PlanAccount | undefined;
  const intents = new Map<string, EventDataOf<'tool.intent'>>();
  const deviations: PlanAccount['deviations'] = [];
  for (const e of events) {
    if (isEvent(e, 'tool.intent')) intents.set(e.data.callId, e.data);
    else if (isEvent(e, 'tool.validation') && !e.data.ok && e.data.stage === 'plan') {
      const i = intents.get(e.data.callId);
      deviations.push({
        callId: e.data.callId,
        ...(i?.taskId ? { taskId: i.taskId } : {}),
        tool: i?.tool ?? '?',
        message: e.data.errors.map((x) => x.message).join('; '),
      });
    } else if (isEvent(e, 'plan.created')) {
      const d = e.data;
      a = {
        planId: d.planId,
        plans: (a?.plans ?? 0) + 1,
        proposed: d.tasks,
        dependencies: d.dependencies,
        gate: [],
        tasks: d.tasks.map((t, i) => taskOf(t, i + 1, d.tasks.length)),
        deviations,
        failures: [],
        recoveries: [],
        escalations: [],
      };
    } else if (a) apply(a, e);
  }
  return a;
}

function taskOf(t: PlanTask, index: number, total: number): TaskAccount {
  return { id: t.id, title: t.title, dependsOn: t.dependsOn, index, total, status: 'pending', attempts: 0 };
}

function apply(a: PlanAccount, e: EventEnvelope): void {
  if (!('planId' in e.data) || e.data.planId !== a.planId) return;
  const task = (id: string) => a.tasks.find((t) => t.id === id);
  if (isEvent(e, 'plan.gate')) {
    const d = e.data;
    a.gate.push({
      status: d.status,
      ...(d.by ? { by: d.by } : {}),
      ...(d.changes ? { changes: d.changes } : {}),
      ...(d.reason ? { reason: d.reason } : {}),
    });
    if (d.tasks) {
      // The approved plan replaces the proposed order; a task the gate left out is skipped.
      const kept = d.tasks.map((t, i) => ({ ...(task(t.id) ?? taskOf(t, 0, 0)), title: t.title, index: i + 1 }));
      const left = a.tasks.filter((t) => !d.tasks!.some((x) => x.id === t.id));
      a.tasks = [
        ...kept.map((t) => ({ ...t, total: kept.length })),
        ...left.map((t) => ({ ...t, index: 0, total: kept.length, status: 'skipped' as const })),
      ];
    }
  } else if (isEvent(e, 'task.started')) {
    const t = task(e.data.taskId);
    if (t) Object.assign(t, { status: 'running', attempts: e.data.attempt, index: e.data.index, total: e.data.total });
  } else if (isEvent(e, 'task.completed')) {
    const t = task(e.data.taskId);
    if (t) {
      t.status = 'completed';
      t.result = e.data.result;
      if (e.data.check) t.check = { command: e.data.check.command, exitCode: e.data.check.exitCode };
    }
  } else if (isEvent(e, 'task.failed')) {
    const t = task(e.data.taskId);
    if (t) Object.assign(t, { status: 'failed', error: e.data.error });
  } else if (isEvent(e, 'failure.classified')) a.failures.push(e.data);
  else if (isEvent(e, 'recovery.applied')) a.recoveries.push(e.data);
  else if (isEvent(e, 'recovery.escalated')) {
    const d = e.data;
    const open = a.escalations.find((x) => x.requestId !== undefined && x.requestId === d.requestId);
    const entry = open ?? { taskId: d.taskId, class: d.class, reason: d.reason };
    if (d.requestId) entry.requestId = d.requestId;
    if (d.decision) entry.decision = d.decision;
    if (d.by) entry.by = d.by;
    if (!open) a.escalations.push(entry);
  } else if (isEvent(e, 'plan.completed')) {
    a.completed = e.data;
    for (const id of e.data.skipped) {
      const t = task(id);
      if (t && t.status !== 'completed') t.status = 'skipped';
    }
    for (const id of e.data.failed) {
      const t = task(id);
      if (t) t.status = 'failed';
    }
  }
}
