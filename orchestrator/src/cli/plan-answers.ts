import { STORE_HELP } from './store-flag';
import { InvalidArgumentError, type Command } from 'commander';
import { PlanTaskId, RecoveryChoice, type PlanChanges } from '@gatehouse/shared';
import { nonEmptyChanges, SUBMIT_PLAN } from '../approval/plan-answer';
import { resolveRun } from '../events/run-ref';
import { answerCommand, ApprovalCommandError, treePending } from './approvals';
import { answerOverNatsCommand, natsRunId } from './approver';
import { UsageError } from './usage';
import { parseOnBehalfOf } from './option-parsers';

interface Help {
  stateDirHelp: string;
  runRef: string;
}

interface Common {
  /** The plan request the person read (printed when the run paused): any other pending plan is refused. */
  request?: string;
  stateDir?: string;
  json?: boolean;
  onBehalfOf?: string;
  nats?: boolean;
  key?: string;
}

/**
 * `plan GOAL` takes run's options (--state-dir, --json), and commander gives an option the parent
 * knows to the parent even after `plan approve RUN`: the answer commands read them from there too.
 */
function inherited<T extends Common>(plan: Command, o: T): T {
  const parent = plan.opts<Common>();
  return {
    ...o,
    ...(o.stateDir === undefined && parent.stateDir !== undefined ? { stateDir: parent.stateDir } : {}),
    ...(o.json === undefined && parent.json !== undefined ? { json: parent.json } : {}),
  };
}

type Answer = Parameters<typeof answerCommand>[2] & { decision: 'grant' | 'deny' };

/**
 * Writes the answer to a paused run's log, or with --nats signs it with an approver key and sends it
 * to the live run (which checks it, changes included, before it counts).
 */
async function answer(run: string, which: string | { tool: string }, o: Common, a: Answer): Promise<number> {
  if (!o.nats) {
    const requestId = typeof which === 'string' ? which : pinnedPlan(pendingPlan(run, o), o.request);
    return answerCommand(run, requestId, { ...o, ...a });
  }
  if (!o.key) throw new UsageError('--nats needs --key FILE');
  if (o.onBehalfOf) throw new UsageError('--on-behalf-of is for an answer written here; over NATS the key says who');
  return answerOverNatsCommand(natsRunId(run, o.stateDir), typeof which === 'string' ? which : (o.request ?? which), {
    key: o.key,
    decision: a.decision,
    ...(a.scope ? { scope: a.scope } : {}),
    ...(a.reason ? { reason: a.reason } : {}),
    ...(a.plan ? { plan: a.plan } : {}),
  });
}

const PLAN_REQUEST = { tool: SUBMIT_PLAN };

/**
 * `--request`: the answer is for the plan the person read. If that plan was answered meanwhile and
 * the model submitted another, the pending one is a plan they have not seen: refused, not answered.
 */
function pinnedPlan(pending: string, pinned: string | undefined): string {
  if (pinned === undefined || pinned === pending) return pending;
  throw new ApprovalCommandError(
    `the plan waiting for approval is ${pending}, not ${pinned} (which was answered, or is not a plan): ` +
      `read the plan now waiting with: gatehouse approvals RUN, then answer it with --request ${pending}`,
  );
}

/**
 * `gatehouse plan approve|reject|ask RUN` and `gatehouse plan decide RUN REQUEST retry|skip|abort`:
 * answers to a paused plan run, written to its log exactly as `gatehouse approve` writes them
 * (approvals.ts: the log's writer lock, the request still pending, channel `cli`); then
 * `gatehouse resume RUN` continues. Changes are applied to the plan before anything is written, and
 * refused naming the problem. With `--nats --key FILE` the answer goes, signed, to a live run.
 */
export function registerPlanAnswers(plan: Command, h: Help): void {
  const common = (c: Command): Command =>
    c
      .option('--on-behalf-of <who>', 'whom this account answers for, recorded with it', parseOnBehalfOf)
      .option('--state-dir <dir>', h.stateDirHelp)
      .option('--store <url>', `${STORE_HELP}; the answer is written to the run there`)
      .option('--json', 'print the recorded event as JSON')
      .option('--nats', "answer a live run over NATS (signed with --key; the run's policy must list the key)")
      .option('--key <file>', 'approver key file from `gatehouse approver keygen` (with --nats)');

  common(
    plan
      .command('approve')
      .description("approve a paused run's plan, as it is or with changes (then: gatehouse resume RUN)")
      .argument('<run>', h.runRef)
      .option('--request <id>', 'the plan request you read (as printed when the run paused); refuses any other')
      .option('--skip <ids>', 'skip these tasks (repeatable, or comma-separated: t2,t4)', addIds, [])
      .option('--order <ids>', 'run the tasks kept in this order (every one, comma-separated: t1,t3,t2)', parseIds)
      .option('--edit <id=title>', "give a task a new title (repeatable: --edit 't2=Fix the parser')", addEdit, {})
      .option('--reason <text>', 'why (recorded)'),
  ).action(
    async (
      run: string,
      o: Common & { skip: string[]; order?: string[]; edit: Record<string, string>; reason?: string },
    ) => {
      const changes = nonEmptyChanges({ skip: o.skip, ...(o.order ? { order: o.order } : {}), edit: o.edit });
      process.exitCode = await answer(run, PLAN_REQUEST, inherited(plan, o), {
        decision: 'grant',
        scope: 'once',
        ...(o.reason ? { reason: o.reason } : {}),
        ...(changes ? { plan: { changes } } : {}),
      });
    },
  );

  common(
    plan
      .command('reject')
      .description("reject a paused run's plan; the model sees the reason and may submit another")
      .argument('<run>', h.runRef)
      .option('--request <id>', 'the plan request you read (as printed when the run paused); refuses any other')
      .requiredOption('--reason <text>', 'why (the model sees it)', nonEmpty),
  ).action(async (run: string, o: Common & { reason: string }) => {
    process.exitCode = await answer(run, PLAN_REQUEST, inherited(plan, o), { decision: 'deny', reason: o.reason });
  });

  common(
    plan
      .command('ask')
      .description("answer a paused run's plan with a question; the model answers it and submits the plan again")
      .argument('<run>', h.runRef)
      .option('--request <id>', 'the plan request you read (as printed when the run paused); refuses any other')
      .requiredOption('--question <text>', 'the question (the model sees it)', nonEmpty),
  ).action(async (run: string, o: Common & { question: string }) => {
    process.exitCode = await answer(run, PLAN_REQUEST, inherited(plan, o), {
      decision: 'deny',
      reason: o.question,
      plan: { clarify: true },
    });
  });

  common(
    plan
      .command('decide')
      .description('answer an escalation of a paused plan run: retry the task, skip it, or abort the plan')
      .argument('<run>', h.runRef)
      .argument('<request>', 'the escalation request id (from gatehouse approvals RUN)')
      .argument('<choice>', 'retry, skip or abort', parseChoice)
      .option('--reason <text>', 'why (recorded)'),
  ).action(async (run: string, request: string, choice: RecoveryChoice, o: Common & { reason?: string }) => {
    process.exitCode = await answer(run, request, inherited(plan, o), {
      decision: 'grant',
      scope: 'once',
      ...(o.reason ? { reason: o.reason } : {}),
      plan: { choice },
    });
  });
}

/** The one plan waiting for approval in the run (or a sub-agent of it); none or several is refused. */
function pendingPlan(ref: string, o: { stateDir?: string }): string {
  const { stateDir, runId } = resolveRun(ref, o);
  const pending = treePending(stateDir, runId);
  const plans = pending.filter((p) => p.request.tool === SUBMIT_PLAN);
  if (plans.length === 1) return plans[0]!.request.requestId;
  if (plans.length === 0)
    throw new ApprovalCommandError(
      `run ${runId} has no plan waiting for approval (pending: ` +
        `${pending.map((p) => `${p.request.requestId} ${p.request.tool}`).join(', ') || 'none'}); list them with: ` +
        `gatehouse approvals ${runId}`,
    );
  throw new ApprovalCommandError(
    `run ${runId} has ${plans.length} plans waiting for approval (` +
      `${plans.map((p) => `${p.request.requestId} in ${p.runId}`).join(', ')}); answer one by its request with: ` +
      `gatehouse approve ${runId} REQUEST or gatehouse deny ${runId} REQUEST --reason …`,
  );
}

function taskId(value: string): string {
  const id = PlanTaskId.safeParse(value);
  if (!id.success) throw new InvalidArgumentError(`"${value}" is not a task id (1-32 letters, digits, _ . -, e.g. t2)`);
  return id.data;
}

function parseIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) throw new InvalidArgumentError('name at least one task id (t1,t3,t2)');
  const seen = new Set<string>();
  for (const id of ids.map(taskId)) {
    if (seen.has(id)) throw new InvalidArgumentError(`task ${id} is named twice`);
    seen.add(id);
  }
  return ids;
}

function addIds(value: string, previous: string[]): string[] {
  const all = [...previous, ...parseIds(value)];
  const twice = all.find((id, i) => all.indexOf(id) !== i);
  if (twice) throw new InvalidArgumentError(`task ${twice} is named twice`);
  return all;
}

function addEdit(value: string, previous: NonNullable<PlanChanges['edit']>): Record<string, string> {
  const eq = value.indexOf('=');
  const title = value.slice(eq + 1).trim();
  if (eq < 0 || !title) throw new InvalidArgumentError(`"${value}" is not ID=NEW TITLE (e.g. 't2=Fix the parser')`);
  const id = taskId(value.slice(0, eq).trim());
  if (id in previous) throw new InvalidArgumentError(`task ${id} is edited twice`);
  if (title.length > 300) throw new InvalidArgumentError(`the new title of ${id} is over 300 characters`);
  return { ...previous, [id]: title };
}

function parseChoice(value: string): RecoveryChoice {
  const c = RecoveryChoice.safeParse(value);
  if (!c.success) throw new InvalidArgumentError('must be retry, skip or abort');
  return c.data;
}

function nonEmpty(value: string): string {
  if (!value.trim()) throw new InvalidArgumentError('must not be empty');
  return value.trim();
}
