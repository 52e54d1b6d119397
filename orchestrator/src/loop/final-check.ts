import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { lastEvent, type StateTracker } from '../events/state';
import type { CallResult, ToolCall } from '../tools/pipeline';
import type { LogPort } from '../tools/ports';
import { checkExcerpt, firstLine } from './check-excerpt';
import { saysNothingOfTheReply } from './undecided-reply';
import {
  checkFailures,
  checkPassed,
  checkRunAfterLastChange,
  checkRunOf,
  nextCheckCallId,
  openGatehouseCheck,
  type CheckRun,
} from './check-runs';

/** How the check ends a run, or pauses it (the loop's LoopOutcome has this shape). */
export interface CheckOutcome {
  status: EventDataOf<'run.completed'>['status'] | 'paused';
  stopReason: string;
  answer?: string;
  pending?: string[];
  /** `check` on every outcome the check decided (run.completed's decidedBy). */
  decidedBy?: string;
}

/** What deciding by the check needs: the command, and the run's log, state and pipeline. */
export interface FinalCheck {
  /** The check command (`--check`, or the config's `check`; resume: the one run.started recorded). */
  command: string;
  /** Asked of gatehouse's own run of the check (milliseconds; the runtime caps it). */
  timeoutMs?: number;
  log: LogPort & { events(): readonly EventEnvelope[] };
  tracker: StateTracker;
  pipeline: {
    run(call: ToolCall, signal?: AbortSignal): Promise<CallResult>;
    continueCall(callId: string, signal?: AbortSignal): Promise<CallResult | undefined>;
  };
}

/**
 * After the answer contract accepted an answer: the run is `final` only if the check ran after the
 * last change to the workspace and exited 0, run by gatehouse itself through the same pipeline
 * (policy, approval, sandbox, observation) in a fresh HOME. A model's own failing run after its last
 * change decides without another run; its passing run is not enough (see below).
 * A first failure is sent back to the model (`run.feedback`, kind `check`) and undefined is
 * returned: the loop goes on. A second failure, or a check that could not run at all (denied,
 * declined, rejected), ends the run `partial`. A check waiting for approval pauses the run.
 */
export async function decideByCheck(
  c: FinalCheck,
  turn: number,
  answer: string,
  signal: AbortSignal,
): Promise<CheckOutcome | undefined> {
  let run = checkRunAfterLastChange(c.log.events(), c.command);
  // A pass the model ran is not the verdict: it ran with whatever earlier commands left in HOME
  // (~/.npmrc's script-shell, a Python user site), which is outside the workspace and no diff.
  // Gatehouse runs the check itself, in a HOME made afresh (exec's freshHome). A failure decides as it is.
  if (!run || (run.ranBy === 'model' && checkPassed(run))) {
    const callId = nextCheckCallId(c.log.events());
    const result = await c.pipeline.run(
      {
        callId,
        turn,
        tool: 'bash',
        input: {
          command: c.command,
          description: 'the check that decides the run, run by gatehouse',
          ...(c.timeoutMs ? { timeout: c.timeoutMs } : {}),
        },
        actor: 'runtime',
      },
      signal,
    );
    if (signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
    if (result.kind === 'pending') return paused(result.requestId);
    run = checkRunOf(c.log.events(), callId);
  }
  return judge(c, turn, answer, run);
}

/**
 * On resume, before the model is asked again: gatehouse's run of the check that the stopped run left
 * open (waiting for approval, or interrupted) is finished and decides, as it would have. Undefined
 * when there is none, or when it failed for the first time and went back to the model.
 */
export async function resumeCheck(c: FinalCheck, signal: AbortSignal): Promise<CheckOutcome | undefined> {
  const events = c.log.events();
  const callId = openGatehouseCheck(events);
  const output = lastEvent(events, 'model.output');
  if (!output) return undefined;
  if (!callId) return actOnRecordedVerdict(c, output.data);
  if (!c.tracker.state.approvals.calls[callId]?.observed) {
    const result = await c.pipeline.continueCall(callId, signal);
    if (signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
    if (result?.kind === 'pending') return paused(result.requestId);
  }
  const run = checkRunOf(c.log.events(), callId);
  // Interrupted while it ran: it is never continued (it may have had effects), so it runs again.
  if (run.status === 'lost') return decideByCheck(c, output.data.turn, output.data.text, signal);
  return judge(c, output.data.turn, output.data.text, run);
}

/** Records the check's result (`run.check`) and decides: final, feedback once, or partial. */
function judge(c: FinalCheck, turn: number, answer: string, run: CheckRun): CheckOutcome | undefined {
  const failedBefore = checkFailures(c.log.events());
  const passed = checkPassed(run);
  const reason = passed ? undefined : whyNot(run);
  c.log.append('run.check', 'runtime', {
    command: c.command,
    ranBy: run.ranBy,
    callId: run.callId,
    ...(run.observationId ? { observationId: run.observationId } : {}),
    exitCode: run.executed ? run.exitCode : null,
    passed,
    ...(reason ? { reason: reason.slice(0, 2000) } : {}),
  });
  return act(c, turn, answer, run, failedBefore);
}

/**
 * The check's verdict on the last answer, recorded (`run.check`) but not acted on: the run stopped
 * before its end or before the feedback. Acted on now, as it would have been (not asking the model
 * again). Undefined when the last thing the run did was not that verdict (undecided-reply.ts says
 * which events after it do not count).
 */
function actOnRecordedVerdict(c: FinalCheck, output: { turn: number; text: string }): CheckOutcome | undefined {
  const events = c.log.events();
  let i = events.length - 1;
  while (i >= 0 && saysNothingOfTheReply(events[i]!.type)) i--;
  const recorded = events[i];
  if (recorded?.type !== 'run.check') return undefined;
  const run = checkRunOf(events, recorded.data.callId);
  return act(c, output.turn, output.text, run, checkFailures(events.slice(0, i)));
}

/** What a verdict decides: final, partial, or (the first failure) feedback and undefined: the loop goes on. */
function act(
  c: FinalCheck,
  turn: number,
  answer: string,
  run: CheckRun,
  failedBefore: number,
): CheckOutcome | undefined {
  if (checkPassed(run)) return { status: 'final', stopReason: 'final_answer', answer, decidedBy: 'check' };
  // The model cannot change the policy or a person's answer: sending it back would only ask again.
  if (!run.executed) return { status: 'partial', stopReason: 'check_not_run', answer, decidedBy: 'check' };
  if (failedBefore > 0) return { status: 'partial', stopReason: 'check_failed', answer, decidedBy: 'check' };
  c.log.append('run.feedback', 'runtime', {
    turn,
    kind: 'check',
    reason:
      `the check \`${c.command}\` failed (${whyNot(run)}; ${run.observationId ?? run.callId}, run by ` +
      `${run.ranBy === 'model' ? 'you' : 'gatehouse'}).\nFix what it reports, run \`${c.command}\` again with ` +
      `bash after your last change, then answer. The end of its output:\n${checkExcerpt(run)}`,
  });
  return undefined;
}

/** Why a run of the check did not pass, in a few words. */
function whyNot(run: CheckRun): string {
  if (!run.executed) {
    const said = firstLine(run.content);
    return `it did not run: ${run.observationOutcome ?? 'not executed'}${said ? `: ${said}` : ''}`;
  }
  if (run.status === 'ok' || run.status === 'failed')
    return run.exitCode === null ? 'no exit code' : `exit code ${run.exitCode}`;
  return `${run.status ?? 'no result'}${run.exitCode !== null ? `, exit code ${run.exitCode}` : ''}`;
}

function paused(requestId: string): CheckOutcome {
  return { status: 'paused', stopReason: 'awaiting_approval', pending: requestId ? [requestId] : [] };
}

/** The line the system prompt gets when a check decides the run (the command is quoted as data). */
export function checkInstruction(command: string): string {
  return (
    `This run has a check command: ${JSON.stringify(command)}. The run succeeds only if that exact command, run ` +
    'with bash after your last change, exits 0; if you do not run it, gatehouse runs it before accepting your answer.'
  );
}
