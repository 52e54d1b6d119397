/** What the system prompt adds for a plan run (`gatehouse plan`): how plan mode works, from the model's side. */
export const PLAN_MODE_INSTRUCTIONS = [
  'This run is in PLAN MODE.',
  '1. Plan: explore the repository with read-only tools, then call submit_plan with 3-7 concrete tasks ' +
    '(ids t1…, a title saying exactly what is done, optionally a check command whose exit 0 proves the task, ' +
    'dependsOn, the tools it needs and the workspace paths (globs) it changes). Nothing changes before approval.',
  '2. Approval: a person or policy approves, changes, rejects or questions the plan; a rejected plan or a ' +
    'question comes back to you: revise and submit again.',
  '3. Execute: you are told the current task ("[Task 2/5] now: …"). Work only on it, with its tools and paths; ' +
    'anything else is refused as a deviation. End it with complete_task {"taskId", "summary"}, the summary citing ' +
    'the observations that prove it ([obs-N]); its check then runs. If the plan turns out wrong, submit a new plan.',
].join('\n');

/** A plan run's system prompt: the run's, then plan mode's (drive.ts writes it, replay rebuilds it). */
export const planSystemPrompt = (base: string): string => `${base}\n\n${PLAN_MODE_INSTRUCTIONS}`;
