import type { EventEnvelope } from '@gatehouse/shared';
import type { ApprovalChannel } from '../../src/approval/channels/types';
import type { PlanTask, RecoveryRecipes, TaskFailure } from '../../src/plan/plan-types';
import type { RecoveryDeps } from '../../src/plan/recover';
import { recoveryRecipes } from '../../src/plan/recovery-recipes';
import type { ExecResponder } from '../../src/testing/index';
import type { Observation } from '../../src/tools/pipeline';
import { harness, observed, type Harness } from '../tools/pipeline-harness';

/** The spec's recipes, as a run without a `recovery` config has them. */
export const RECIPES: RecoveryRecipes = recoveryRecipes();

export const TASK: PlanTask = { id: 't2', title: 'Fetch the health endpoint', dependsOn: [] };
export const PLAN_ID = 'plan_recover1';

export interface RecoveryHarness {
  h: Harness;
  deps: RecoveryDeps;
  /** Every backoff waited, in ms. */
  delays: number[];
}

/** A real pipeline over the in-memory sandbox, its log, and recovery deps whose sleep only records. */
export function recoveryHarness(
  opts: { exec?: ExecResponder; channel?: ApprovalChannel; recipes?: RecoveryRecipes; h?: Harness } = {},
): RecoveryHarness {
  const h = opts.h ?? harness({ sandbox: { ...(opts.exec ? { exec: opts.exec } : {}) } });
  const delays: number[] = [];
  const deps: RecoveryDeps = {
    log: h.log,
    tracker: h.tracker,
    pipeline: h.pipeline,
    recipes: opts.recipes ?? RECIPES,
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    ...(opts.channel ? { channel: opts.channel } : {}),
  };
  return { h, deps, delays };
}

/** Runs the model's call through the pipeline and hands its failure to recovery as the driver would. */
export async function failedCall(h: Harness, input: { command: string }): Promise<TaskFailure> {
  const obs: Observation = observed(await h.callResult('bash', input));
  if (obs.outcome === 'ok') throw new Error(`the call was meant to fail: ${obs.content}`);
  const completed = h.event<{ status: string; exitCode: number | null }>('tool.execution.completed', obs.callId);
  return {
    planId: PLAN_ID,
    task: TASK,
    index: 2,
    total: 3,
    failure: {
      kind: 'call',
      tool: 'bash',
      outcome: obs.outcome,
      content: obs.content,
      ...(completed ? { status: completed.status, exitCode: completed.exitCode } : {}),
    },
    call: { callId: obs.callId, tool: 'bash', input, turn: 1 },
  };
}

export function checkFailure(exitCode = 1): TaskFailure {
  return {
    planId: PLAN_ID,
    task: TASK,
    index: 2,
    total: 3,
    failure: { kind: 'check', command: 'npm test', exitCode, output: '1 failing' },
  };
}

/** The log's event types, with the callId or outcome/status that tells them apart. */
export function trail(events: readonly EventEnvelope[], from = 0): string[] {
  return events.slice(from).map((e) => {
    const d = e.data as { callId?: string; outcome?: string; status?: string; class?: string };
    if (e.type === 'failure.classified') return `${e.type}:${d.class}`;
    if (e.type === 'recovery.applied') return `${e.type}:${d.outcome}`;
    if (e.type === 'recovery.escalated') return `${e.type}:${d.status}`;
    return d.callId ? `${e.type}:${d.callId}` : e.type;
  });
}
