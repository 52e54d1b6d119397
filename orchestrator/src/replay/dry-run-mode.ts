import { isEvent, type EventEnvelope } from '@gatehouse/shared';
import { oneLine } from '../approval/channels/screen';
import { narrowPolicy } from '../agents/narrow';
import { StateTracker } from '../events/state';
import type { ApprovalPolicy } from '../policy/index';
import { recordedMcpTools } from '../mcp/recorded-tools';
import { codingTools } from '../tools/builtin/index';
import { recordedCalls, type RecordedCall, type ReplayedDecision } from './recorded-calls';
import { recordedSubRuns, type RecordedSubRun } from './recorded-tree';
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
 * A run's sub-agents are decided too (their own logs, recorded-tree.ts), under the policy narrowed
 * to the paths each was handed: an action a sub-agent ran and that would now be denied is `denied`.
 */
export const dryRunMode: ReplayModeRunner = {
  async prepare(recorded, options) {
    refuseForeignOptions('dry-run', options, ['policyFile']);
    const policy = await replayPolicy(recorded, options.policyFile);
    const subRuns = recordedSubRuns(options.stateDir, recorded, options.key);
    return {
      record: { policy: { source: policy.source.slice(0, 4096), sha256: policy.sha256 } },
      run: (ctx) => Promise.resolve(dryRun(ctx, policy, subRuns)),
    };
  },
};

function dryRun(ctx: ReplayContext, p: ReplayPolicy, subRuns: readonly RecordedSubRun[]): ReplayOutcome {
  ctx.say(`policy: ${p.source} (mode ${p.policy.mode})`);
  const tally = { compared: 0, differed: 0, skipped: 0, deniedRan: 0 };
  decideRun(ctx, ctx.recorded, p.policy, '', tally);
  // A run's actions include its sub-agents': each is decided under the policy narrowed as when it ran.
  for (const sub of subRuns) {
    const policy = sub.narrowings.reduce(narrowPolicy, p.policy);
    decideRun(ctx, sub.events, policy, sub.prefix, tally);
  }
  const { compared, differed, skipped, deniedRan } = tally;
  if (differed === 0) ctx.say(`  no decision changed (${compared} compared)`);
  const verdict = deniedRan > 0 ? 'denied' : differed > 0 ? 'changed' : 'match';
  return { compared, differed, skipped, verdict };
}

interface Tally {
  compared: number;
  differed: number;
  skipped: number;
  deniedRan: number;
}

/** One run's recorded intents decided again; a sub-agent's call ids carry the delegate calls that led to it. */
function decideRun(
  ctx: ReplayContext,
  events: readonly EventEnvelope[],
  policy: ApprovalPolicy,
  prefix: string,
  t: Tally,
): void {
  const first = events[0];
  const registry = codingTools();
  // MCP tools join a run after it started (docs/mcp.md): as its log recorded them.
  const mcp = recordedMcpTools(events);
  registry.add(mcp);
  const started = first && isEvent(first, 'run.started') ? first.data.surface : [];
  const surface = [...started, ...mcp.map((t) => t.name)];
  // The gate decided on the state folded from the events before each intent (approved shapes).
  const tracker = new StateTracker();
  let at = 0;
  for (const call of recordedCalls(events)) {
    foldUpTo(tracker, events, at, call.index);
    at = call.index;
    const callId = `${prefix}${call.intent.data.callId}`.slice(-128);
    if (!call.then) {
      t.skipped++;
      ctx.say(`  ${callId} ${call.intent.data.tool}: skipped (no decision on record)`);
      continue;
    }
    const { now, actionHash } = redecideCall(call, {
      registry,
      surface,
      policy,
      approvedShapes: tracker.state.approvals.approvedShapes,
    });
    const changed = call.then.decision !== now.decision;
    ctx.log.append('replay.decision', 'runtime', {
      callId,
      tool: call.intent.data.tool.slice(0, 200),
      actionHash: call.approval?.data.actionHash ?? actionHash,
      ran: call.ran,
      then: call.then,
      now,
      changed,
    });
    t.compared++;
    if (!changed) continue;
    t.differed++;
    if (call.ran && now.decision === 'deny') t.deniedRan++;
    ctx.say(changeLine(callId, call, call.then, now));
  }
}

function foldUpTo(tracker: StateTracker, events: readonly EventEnvelope[], from: number, to: number): void {
  for (let i = from; i < to; i++) tracker.apply(events[i]!);
}

function changeLine(callId: string, call: RecordedCall, then: ReplayedDecision, now: ReplayedDecision): string {
  const d = call.intent.data;
  const what = `${d.tool} ${oneLine(JSON.stringify(d.input) ?? '')}`.slice(0, 120);
  const by = then.by && then.by !== 'policy' && then.by !== 'runtime' ? `, decided by ${then.by}` : '';
  return (
    `  ${callId} ${what}: ${then.decision} → ${now.decision}${call.ran ? ' (it ran)' : ''}\n` +
    `      then: ${then.rule ?? 'unknown rule'}${by}\n` +
    `      now:  ${now.rule ?? 'unknown rule'}`
  );
}
