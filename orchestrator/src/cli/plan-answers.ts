import type { Command } from 'commander';

/** `gatehouse plan approve|reject|decide` (issue 15, in progress): answers to a paused plan run. */
export function registerPlanAnswers(_plan: Command, _h: { stateDirHelp: string; runRef: string }): void {}
