import { isEvent, type EventEnvelope } from '@gatehouse/shared';
import { oneLine } from '../approval/channels/screen';
import { StateTracker } from '../events/state';
import { codingTools } from '../tools/builtin/index';
import { recordedCalls, type RecordedCall, type ReplayedDecision } from './recorded-calls';
import { redecideCall } from './redecide-call';
import { refuseForeignOptions } from './refuse-foreign-options';
import { replayPolicy, type ReplayPolicy } from './replay-policy';
import type { ReplayContext, ReplayModeRunner, ReplayOutcome } from './replay-types';

/**
 * `gatehouse replay RUN --mode dry-run [--policy FILE]`: every recorded intent validated and decided
 * again under a policy (the given file, else the one the run would load today: replay-policy.ts),
 * executing nothing — no sandbox, no model, no approver (replay/redecide-call.ts says what is checked
 * again and what is taken from the record). One `replay.decision` per call; each decision that
 * changed is printed with the rule then and now. The verdict is `denied` when a call that ran would
 * now be denied (exit 1: CI can gate a policy change on past runs), `changed` when decisions changed
 * otherwise, else `match`. A call the log has no decision for (the run was cut short) is skipped.
 */
export const dryRunMode: ReplayModeRunner = {
  async prepare(recorded, options) {
    refuseForeignOptions('dry-run', options, ['policyFile']);
    const policy = await replayPolicy(recorded, options.policyFile);
    return {
      record: { policy: { source: policy.source.slice(0, 4096), sha256: policy.sha256 } },
      run: (ctx) => Promise.resolve(dryRun(ctx, policy)),
    };
  },
};

function dryRun(ctx: ReplayContext, p: ReplayPolicy): ReplayOutcome {
  const events = ctx.recorded;
  const first = events[0];
  const surface = first && isEvent(first, 'run.started') ? first.data.surface : [];
  const registry = codingTools();
  ctx.say(`policy: ${p.source} (mode ${p.policy.mode})`);
  let compared = 0;
  let differed = 0;
  let skipped = 0;
  let deniedRan = 0;
  // The gate decided on the state folded from the events before each intent (approved shapes).
  const tracker = new StateTracker();
  let at = 0;
  for (const call of recordedCalls(events)) {
    foldUpTo(tracker, events, at, call.index);
    at = call.index;
    if (!call.then) {
      skipped++;
      ctx.say(`  ${call.intent.data.callId} ${call.intent.data.tool}: skipped (no decision on record)`);
      continue;
    }
    const { now, actionHash } = redecideCall(call, {
      registry,
      surface,
      policy: p.policy,
      approvedShapes: tracker.state.approvals.approvedShapes,
    });
    const changed = call.then.decision !== now.decision;
    ctx.log.append('replay.decision', 'runtime', {
      callId: call.intent.data.callId,
      tool: call.intent.data.tool.slice(0, 200),
      actionHash: call.approval?.data.actionHash ?? actionHash,
      ran: call.ran,
      then: call.then,
      now,
      changed,
    });
    compared++;
    if (!changed) continue;
    differed++;
    if (call.ran && now.decision === 'deny') deniedRan++;
    ctx.say(changeLine(call, call.then, now));
  }
  if (differed === 0) ctx.say(`  no decision changed (${compared} compared)`);
  const verdict = deniedRan > 0 ? 'denied' : differed > 0 ? 'changed' : 'match';
  return { compared, differed, skipped, verdict };
}

function foldUpTo(tracker: StateTracker, events: readonly EventEnvelope[], from: number, to: number): void {
  for (let i = from; i < to; i++) tracker.apply(events[i]!);
}

function changeLine(call: RecordedCall, then: ReplayedDecision, now: ReplayedDecision): string {
  const d = call.intent.data;
  const what = `${d.tool} ${oneLine(JSON.stringify(d.input) ?? '')}`.slice(0, 120);
  const by = then.by && then.by !== 'policy' && then.by !== 'runtime' ? `, decided by ${then.by}` : '';
  return (
    `  ${d.callId} ${what}: ${then.decision} → ${now.decision}${call.ran ? ' (it ran)' : ''}\n` +
    `      then: ${then.rule ?? 'unknown rule'}${by}\n` +
    `      now:  ${now.rule ?? 'unknown rule'}`
  );
}
