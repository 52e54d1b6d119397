import { afterEach } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import type { ApprovalChannel } from '../../src/approval/channels/types';
import { StateTracker } from '../../src/events/state';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import { planRunParts } from '../../src/plan/plan-loop';
import { recoveryRecipes } from '../../src/plan/recovery-recipes';
import type { ApprovalPolicy } from '../../src/policy/approval-policy';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import { tee } from '../../src/run/tee';
import { MemorySandbox, TestLog, type ExecResponder } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline } from '../../src/tools/pipeline';
import { ALL_TOOLS, LIMITS } from '../tools/pipeline-harness';

/**
 * A plan run as drive.ts wires one (plan/plan-loop.ts), over the real loop, pipeline, policy, log
 * and plan driver, with a scripted model and the in-memory sandbox: no Docker. Each `stretch` is
 * one process's part of the run (a resume folds the state from the log again).
 */
export const PLAN_SURFACE = [...ALL_TOOLS, 'submit_plan', 'complete_task'];
const BUDGETS = { maxTurns: 40, maxToolCalls: 60, maxTokens: 1_000_000, wallClockMs: 600_000 };

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

export interface PlanWorld {
  log: TestLog;
  sandbox: MemorySandbox;
  /** Every command the sandbox was asked to run, in order. */
  commands: string[];
}

export function planWorld(
  o: { files?: Record<string, string>; links?: Record<string, string>; exec?: ExecResponder; surface?: string[] } = {},
): PlanWorld {
  const log = new TestLog();
  logs.push(log);
  log.append('run.started', 'user', {
    task: 'plan',
    mode: 'sandboxed-auto',
    surface: o.surface ?? PLAN_SURFACE,
    planMode: true,
  });
  const commands: string[] = [];
  const exec: ExecResponder = (req) => {
    commands.push(req.command);
    return o.exec ? o.exec(req) : { exitCode: 0, output: 'ok\n' };
  };
  const files = o.files ?? { 'src/a.js': 'a\n', 'docs/b.md': 'b\n' };
  const sandbox = new MemorySandbox({ files, ...(o.links ? { links: o.links } : {}), exec });
  return { log, sandbox, commands };
}

export function planStretch(
  w: PlanWorld,
  script: Script,
  o: { policy: ApprovalPolicy; channel?: ApprovalChannel; resume?: boolean; surface?: string[] },
): Promise<LoopOutcome> {
  const tracker = new StateTracker(w.log.events());
  const teed = tee(w.log.log, tracker);
  const provider = new ScriptedProvider(script);
  provider.resumeAfter?.(tracker.state.turns);
  const registry = codingTools();
  const surface = o.surface ?? PLAN_SURFACE;
  const parts = planRunParts({ tracker, registry, surface, resume: o.resume === true });
  const pipeline = new ToolPipeline({
    log: teed,
    tracker,
    registry,
    surface,
    policy: o.policy,
    sandbox: w.sandbox,
    limits: LIMITS,
    planScope: parts.planScope,
    ...(o.channel ? { channel: o.channel } : {}),
  });
  const recovery = {
    log: teed,
    tracker,
    pipeline,
    ...(o.channel ? { channel: o.channel } : {}),
    recipes: recoveryRecipes(),
    sleep: () => Promise.resolve(),
  };
  return runLoop({
    provider,
    log: teed,
    tracker,
    pipeline,
    system: parts.system('test'),
    task: 'plan',
    tools: registry.describe(surface),
    budgets: BUDGETS,
    contextTokenBudget: 100_000,
    signal: new AbortController().signal,
    ...(o.resume ? { resume: true } : {}),
    controller: parts.controller({ log: teed, tracker, pipeline, recovery, checkTimeoutMs: 30_000 }),
  });
}

export const toolCall = (name: string, input: unknown) => ({ toolCalls: [{ name, input }] });
export const complete = (taskId: string, summary: string) => toolCall('complete_task', { taskId, summary });

export function ofType<T extends EventEnvelope['type']>(w: PlanWorld, type: T) {
  return w.log.events().filter((e) => e.type === type) as Array<Extract<EventEnvelope, { type: T }>>;
}
