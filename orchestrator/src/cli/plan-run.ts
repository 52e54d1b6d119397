import { InvalidArgumentError, type Command } from 'commander';
import { runCommand } from './run';
import { MODEL_HELP, sessionOptions, startOptions } from './session-commands';

/**
 * `gatehouse plan GOAL --model … [every option of run]`: plan mode (docs/plan.md). The model explores
 * read-only and submits a plan, the plan passes the approval gate, then the approved plan is
 * executed task by task. Resumed with `gatehouse resume RUN` like any run. Returns the `plan`
 * command, which also holds `plan approve|reject|decide` (plan-answers.ts).
 */
export function registerPlanRun(program: Command, h: { stateDirHelp: string; runRef: string }): Command {
  const plan = sessionOptions(
    startOptions(
      program
        .command('plan')
        .description('plan mode: the model plans read-only, the plan is approved, then executed exactly (docs/plan.md)')
        .argument('[goal]', 'what the plan should achieve')
        // Not a required option: `plan approve RUN` needs no model (commander checks a parent's too).
        .option('--model <spec>', `${MODEL_HELP} (required)`),
    ),
    h,
  );
  plan.action(async (goal: string | undefined, o: Parameters<typeof runCommand>[1], cmd: Command) => {
    if (!goal) throw new InvalidArgumentError('gatehouse plan needs a goal: gatehouse plan "GOAL" --model SPEC');
    if (!o.model)
      throw new InvalidArgumentError('gatehouse plan needs --model SPEC (openai:…, anthropic:…, scripted:FILE)');
    const explicit = {
      maxTurns: cmd.getOptionValueSource('maxTurns') === 'cli',
      maxToolCalls: cmd.getOptionValueSource('maxToolCalls') === 'cli',
    };
    process.exitCode = await runCommand(goal, { ...o, explicit }, { planMode: true });
  });
  return plan;
}
