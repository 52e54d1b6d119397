import type { EventEnvelope, PlanTask } from '@gatehouse/shared';

export type TaskStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

/**
 * Plan mode's state, a pure fold of the plan events (part of RunState as `plan`): the tools
 * validate against it and a resumed run sees exactly which tasks are done, so none runs twice.
 */
export interface PlanState {
  /** run.started recorded planMode. */
  planMode: boolean;
  /** planning: exploring, no plan on the table; gate: a plan awaits its answer; executing; done. */
  phase: 'planning' | 'gate' | 'executing' | 'done';
  /** Plans created so far (the next plan.created is version + 1). */
  version: number;
  /** The plan on the table or being executed. */
  planId: string | undefined;
  /** The submit_plan call that proposed it. */
  callId: string | undefined;
  /** The plan as submitted (plan.created). */
  proposed: PlanTask[];
  /** plan.gate requested was recorded for the current plan. */
  requested: boolean;
  /** The approved tasks, in the order they run. */
  tasks: PlanTask[];
  /** Tasks the approver skipped (not in `tasks`). */
  skippedByGate: string[];
  status: Record<string, TaskStatus>;
  /** Attempts started per task (task.started's attempt). */
  attempts: Record<string, number>;
  /** The task being worked on. */
  current: string | undefined;
  /** complete_task summaries of completed tasks. */
  results: Record<string, string>;
}

export function initialPlanState(): PlanState {
  return {
    planMode: false,
    phase: 'planning',
    version: 0,
    planId: undefined,
    callId: undefined,
    proposed: [],
    requested: false,
    tasks: [],
    skippedByGate: [],
    status: {},
    attempts: {},
    current: undefined,
    results: {},
  };
}

/** Folds one event into the plan state in place (events/state.ts calls it for every event). */
export function applyPlan(s: PlanState, event: EventEnvelope): void {
  switch (event.type) {
    case 'run.started':
      s.planMode = event.data.planMode === true;
      return;
    case 'plan.created': {
      const d = event.data;
      // A new plan replaces whatever was being executed: back to the gate.
      Object.assign(s, initialPlanState(), {
        planMode: s.planMode,
        phase: 'gate',
        version: d.version,
        planId: d.planId,
        callId: d.callId,
        proposed: d.tasks,
      });
      return;
    }
    case 'plan.gate': {
      const d = event.data;
      if (d.planId !== s.planId) return;
      if (d.status === 'requested') s.requested = true;
      else if (d.status === 'approved' || d.status === 'modified') {
        s.phase = 'executing';
        s.tasks = d.tasks ?? s.proposed;
        s.skippedByGate = d.changes?.skip ?? [];
        s.status = Object.fromEntries(s.tasks.map((t): [string, TaskStatus] => [t.id, 'pending']));
        s.attempts = {};
        s.current = undefined;
      } else s.phase = 'planning';
      return;
    }
    case 'task.started': {
      const d = event.data;
      if (d.planId !== s.planId) return;
      s.current = d.taskId;
      s.status[d.taskId] = 'running';
      s.attempts[d.taskId] = d.attempt;
      return;
    }
    case 'task.completed': {
      const d = event.data;
      if (d.planId !== s.planId) return;
      s.status[d.taskId] = 'completed';
      s.results[d.taskId] = d.result;
      if (s.current === d.taskId) s.current = undefined;
      return;
    }
    case 'task.failed': {
      const d = event.data;
      if (d.planId !== s.planId) return;
      s.status[d.taskId] = 'failed';
      if (s.current === d.taskId) s.current = undefined;
      return;
    }
    case 'recovery.escalated': {
      // A person's skip ends the task here; retry and abort are acted on by the driver's next events.
      const d = event.data;
      if (d.planId !== s.planId || d.status !== 'decided' || d.decision !== 'skip') return;
      s.status[d.taskId] = 'skipped';
      if (s.current === d.taskId) s.current = undefined;
      return;
    }
    case 'plan.completed':
      if (event.data.planId === s.planId) {
        s.phase = 'done';
        s.current = undefined;
      }
      return;
    default:
      return;
  }
}

/** A copy the fold can change without touching the original. */
export function clonePlanState(s: PlanState): PlanState {
  return structuredClone(s);
}

/** The task being worked on, when there is one. */
export function currentTask(s: PlanState): { task: PlanTask; index: number; total: number } | undefined {
  if (s.phase !== 'executing' || s.current === undefined) return undefined;
  const index = s.tasks.findIndex((t) => t.id === s.current);
  return index < 0 ? undefined : { task: s.tasks[index]!, index: index + 1, total: s.tasks.length };
}

/**
 * What comes next: the first pending task, in the approved order, whose dependencies are all
 * completed; tasks whose dependencies failed or were skipped are skipped with them (`blocked`).
 * `next` undefined with nothing pending left means the plan is over.
 */
export function nextTask(s: PlanState): { next?: PlanTask; blocked: string[] } {
  const status = { ...s.status };
  const blocked: string[] = [];
  // Skipping one task may block another earlier in the order: repeat until nothing changes (≤ 7 tasks).
  for (let changed = true; changed;) {
    changed = false;
    for (const t of s.tasks) {
      if (status[t.id] !== 'pending') continue;
      const dead = t.dependsOn.some((d) => isDead(status[d], s.skippedByGate.includes(d)));
      if (dead) {
        status[t.id] = 'skipped';
        blocked.push(t.id);
        changed = true;
      }
    }
  }
  const next = s.tasks.find((t) => status[t.id] === 'pending' && t.dependsOn.every((d) => status[d] === 'completed'));
  if (!next) for (const t of s.tasks) if (status[t.id] === 'pending') blocked.push(t.id);
  return { ...(next ? { next } : {}), blocked };
}

function isDead(status: TaskStatus | undefined, skippedByGate: boolean): boolean {
  return skippedByGate || status === 'failed' || status === 'skipped';
}
