import type { EventEnvelope } from '@gatehouse/shared';
import type { LoopController } from '../loop/loop-controller';
import type { LoopOutcome } from '../loop/loop';
import type { ModelToolSpec } from '../providers/types';
import type { ToolRegistry } from '../tools/registry';
import { completePlan, planOutcome } from './plan-end';
import { callFailure, recoverFailure, resumeEscalation, startTask } from './plan-failures';
import type { PlanDriverDeps } from './plan-driver-deps';
import { recordPlanGate } from './plan-gate-answer';
import { nextTask, type PlanState } from './plan-state';
import { endTask } from './task-end';

/**
 * The tools a plan run's model is shown in a phase (replay rebuilds the context with it): until a
 * plan is approved only what cannot change anything, and submit_plan; while executing, all of them.
 */
export function planSurface(plan: PlanState, surface: readonly string[], registry: ToolRegistry): string[] {
  if (plan.phase === 'executing') return [...surface];
  return surface.filter(
    (n) => n === 'submit_plan' || (n !== 'complete_task' && registry.get(n)?.sideEffect === 'read'),
  );
}

/** Replies in a row without a tool call before a plan run gives up (each gets feedback first). */
const MAX_NUDGES = 3;

/**
 * Plan mode as hooks on the agent loop (loop/loop.ts): planning (read-only tools and submit_plan;
 * the gate's answer read from the log), then the approved tasks in order, each started only when
 * its dependencies are done and ended by complete_task and its check, failures handed to recovery,
 * and the plan's end (`plan.completed`) as the run's outcome.
 */
export function planController(
  d: PlanDriverDeps & { registry: ToolRegistry; surface: readonly string[]; resume: boolean },
): LoopController {
  let nudges = 0;
  let resumed = d.resume;
  return {
    tools(): ModelToolSpec[] {
      return d.registry.describe(planSurface(d.tracker.state.plan, d.surface, d.registry));
    },

    async beforeTurn(_turn, signal): Promise<LoopOutcome | undefined> {
      if (resumed) {
        resumed = false;
        const escalation = resumeEscalation(d);
        if (escalation !== 'none' && escalation !== undefined) return escalation;
      }
      if (signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
      const plan = d.tracker.state.plan;
      if (plan.phase === 'done') return planOutcome(d);
      if (plan.phase !== 'executing' || plan.current !== undefined) return undefined;
      const { next } = nextTask(plan);
      if (!next) return completePlan(d);
      startTask(d, next.id);
      return undefined;
    },

    onText(turn, text): LoopOutcome | undefined {
      const plan = d.tracker.state.plan;
      if (++nudges > MAX_NUDGES)
        return {
          status: 'partial',
          stopReason: plan.phase === 'executing' ? 'task_not_completed' : 'no_plan',
          answer: text,
          decidedBy: 'plan',
        };
      const reason =
        plan.phase === 'executing'
          ? `this is plan mode: a task ends only with complete_task {"taskId": "${plan.current ?? ''}", "summary": ` +
            '"what was done, citing [obs-N]"}; work on the current task with tool calls, then call complete_task.'
          : 'this is plan mode: explore with read-only tools, then submit your plan with submit_plan ' +
            '(3-7 concrete tasks). Nothing is executed before a plan is approved.';
      d.log.append('run.feedback', 'runtime', { turn, kind: 'contract', reason });
      return undefined;
    },

    callFields() {
      const current = d.tracker.state.plan.current;
      return current !== undefined ? { taskId: current } : {};
    },

    async afterCall(call, result, signal): Promise<LoopOutcome | undefined> {
      nudges = 0;
      // On resume the loop hands over the stopped turn's calls again (loop.ts finishLastTurn) before
      // any turn: the escalation the run stopped on is answered first, and a failure already
      // classified is never recovered from twice.
      if (resumed) {
        resumed = false;
        const escalation = resumeEscalation(d);
        if (escalation !== 'none') return escalation;
      }
      if (classified(d.log.events(), call.callId)) return undefined;
      if (call.tool === 'submit_plan') {
        recordPlanGate(d, call, result);
        return undefined;
      }
      const plan = d.tracker.state.plan;
      if (plan.phase !== 'executing' || plan.current === undefined || call.taskId !== plan.current) return undefined;
      if (call.tool === 'complete_task') {
        if (result.kind === 'observed' && result.observation.outcome === 'ok') return endTask(d, call, signal);
        return undefined;
      }
      const failure = callFailure(d, call, result);
      return failure ? recoverFailure(d, failure, signal, call) : undefined;
    },
  };
}

function classified(events: readonly EventEnvelope[], callId: string): boolean {
  return events.some((e) => e.type === 'failure.classified' && e.data.callId === callId);
}
