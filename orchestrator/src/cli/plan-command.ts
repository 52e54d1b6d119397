import type { Command } from 'commander';
import { registerPlanAnswers } from './plan-answers';
import { registerPlanRun } from './plan-run';

interface Help {
  stateDirHelp: string;
  runRef: string;
}

/**
 * `gatehouse plan`: plan mode (docs/plan.md). `plan GOAL` runs it (plan-run.ts); `plan approve`,
 * `plan reject` and `plan decide` answer a paused plan run's gate and escalations (plan-answers.ts).
 */
export function registerPlanCommand(program: Command, h: Help): void {
  const plan = registerPlanRun(program, h);
  registerPlanAnswers(plan, h);
}
