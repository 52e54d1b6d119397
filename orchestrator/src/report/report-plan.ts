import type { EventEnvelope } from '@gatehouse/shared';
import { planAccount } from '../events/plan-account';
import type { ReportPlan } from './report-plan-schema';

/** The report's `plan`: the plan account of the log (events/plan-account.ts), nulls for what is absent. */
export function planOf(events: readonly EventEnvelope[]): ReportPlan | undefined {
  const a = planAccount(events);
  if (!a) return undefined;
  return {
    planId: a.planId,
    plans: a.plans,
    proposed: a.proposed.map((t) => ({ id: t.id, title: t.title, dependsOn: t.dependsOn, check: t.check ?? null })),
    gate: a.gate.map((g) => ({
      status: g.status,
      by: g.by ?? null,
      changes: g.changes
        ? { skip: g.changes.skip ?? [], order: g.changes.order ?? [], edit: g.changes.edit ?? {} }
        : null,
      reason: g.reason ?? null,
    })),
    tasks: a.tasks.map((t) => ({
      id: t.id,
      title: t.title,
      index: t.index,
      total: t.total,
      status: t.status,
      attempts: t.attempts,
      result: t.result ?? null,
      error: t.error ?? null,
      check: t.check ?? null,
    })),
    deviations: a.deviations.map((d) => ({ ...d, taskId: d.taskId ?? null })),
    failures: a.failures.map((f) => ({
      taskId: f.taskId,
      class: f.class,
      evidence: f.evidence,
      callId: f.callId ?? null,
    })),
    recoveries: a.recoveries.map((r) => ({
      taskId: r.taskId,
      class: r.class,
      recipe: r.recipe,
      attempt: r.attempt,
      maxAttempts: r.maxAttempts,
      outcome: r.outcome,
    })),
    escalations: a.escalations.map((x) => ({
      taskId: x.taskId,
      class: x.class,
      reason: x.reason,
      requestId: x.requestId ?? null,
      decision: x.decision ?? null,
      by: x.by ?? null,
    })),
    summary: a.completed?.summary ?? null,
    aborted: a.completed?.aborted ?? false,
  };
}
