import type { LoopController } from '../loop/loop-controller';
import type { PipelineDeps } from '../tools/pipeline/types';
import type { ToolRegistry } from '../tools/registry';
import type { PlanDriverDeps } from './plan-driver-deps';
import { planController } from './plan-driver';
import { planSystemPrompt } from './plan-prompt';
import { taskScopeErrors } from './task-scope';

/** What drive.ts wires in for a plan run: the scope check on every call, the loop's hooks, the prompt. */
export interface PlanRunParts {
  planScope: NonNullable<PipelineDeps['planScope']>;
  controller: (d: PlanDriverDeps) => LoopController;
  system: (base: string) => string;
}

export function planRunParts(o: {
  tracker: PlanDriverDeps['tracker'];
  registry: ToolRegistry;
  surface: readonly string[];
  resume: boolean;
}): PlanRunParts {
  return {
    planScope: (call) => taskScopeErrors(o.tracker.state.plan, call),
    controller: (d) => planController({ ...d, registry: o.registry, surface: o.surface, resume: o.resume }),
    system: planSystemPrompt,
  };
}
