import type { Command } from 'commander';

/** `gatehouse plan GOAL [run's options]` (issue 15, in progress): registers the command and returns it. */
export function registerPlanRun(program: Command, _h: { stateDirHelp: string; runRef: string }): Command {
  return program.command('plan').description('plan mode: plan, gate, execute the approved plan exactly (docs/plan.md)');
}
