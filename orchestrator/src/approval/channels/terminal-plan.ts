import { PlanTaskId, type PlanChanges, type RecoveryChoice } from '@gatehouse/shared';
import { checkPlanAnswer, ESCALATION, planTasksOf, SUBMIT_PLAN } from '../plan-answer';
import type { Read } from './line-reader';
import { oneLine } from './screen';
import type { ApprovalAnswer, ApprovalPrompt } from './types';

/** One question on the terminal: what to print, the next line typed, and who answers. */
export interface TerminalIo {
  write(s: string): void;
  read(): Promise<Read>;
  approver: string;
  maxInvalid: number;
}

/** The menu and the conversation for a plan or an escalation; undefined for an ordinary call. */
export function planDialog(
  prompt: ApprovalPrompt,
): { menu: string; converse(io: TerminalIo): Promise<ApprovalAnswer> } | undefined {
  if (prompt.tool === SUBMIT_PLAN && planTasksOf(prompt.input))
    return {
      menu: '[a] approve  [c] approve with changes  [q] ask a question  [x] reject',
      converse: (io) => answerPlan(io, prompt),
    };
  if (prompt.tool === ESCALATION)
    return { menu: '[r] retry the task  [s] skip it  [x] abort the plan', converse: (io) => answerEscalation(io) };
  return undefined;
}

const MAX_TEXT_CHARS = 500;
const CANCELLED: ApprovalAnswer = { decision: 'pause', channel: 'terminal', reason: 'cancelled' };

/** The question ended without an answer line: input closed, cancelled, or too many invalid answers. */
interface End {
  end: ApprovalAnswer;
}
const ended = (x: unknown): x is End => typeof x === 'object' && x !== null && 'end' in x;

/** Counts invalid answers across the whole question; too many deny, as for any call. */
class Dialog {
  private invalid = 0;
  constructor(private readonly io: TerminalIo) {}

  async line(ask: string): Promise<string | End> {
    this.io.write(ask);
    const read = await this.io.read();
    if (read.kind === 'line') return read.line.trim();
    if (read.kind === 'aborted') {
      this.io.write('\n  cancelled: the run no longer waits for this answer\n');
      return { end: { ...CANCELLED } };
    }
    this.io.write('\n  input closed: denied\n');
    return {
      end: { decision: 'deny', approver: this.io.approver, channel: 'terminal', reason: 'no answer (input closed)' },
    };
  }

  /** Says what was wrong and lets them try again (undefined), or gives up with a denial. */
  again(why: string): End | undefined {
    this.invalid++;
    if (this.invalid >= this.io.maxInvalid) {
      this.io.write(`  no valid answer after ${this.io.maxInvalid} tries: denied\n`);
      const reason = `no valid answer after ${this.io.maxInvalid} attempts`;
      return { end: { decision: 'deny', approver: this.io.approver, channel: 'terminal', reason } };
    }
    this.io.write(`  ${oneLine(why)} [${this.invalid}/${this.io.maxInvalid}]\n`);
    return undefined;
  }
}

async function answerPlan(io: TerminalIo, prompt: ApprovalPrompt): Promise<ApprovalAnswer> {
  const d = new Dialog(io);
  const who = { approver: io.approver, channel: 'terminal' as const };
  for (;;) {
    const line = await d.line('> ');
    if (ended(line)) return line.end;
    const key = line.toLowerCase();
    if (key === 'a' || key === 'approve') {
      io.write('  plan approved\n');
      return { decision: 'grant', scope: 'once', ...who };
    }
    if (key === 'c' || key === 'change') {
      const changes = await askChanges(d, io, prompt);
      if (ended(changes)) return changes.end;
      if (!changes) {
        io.write('  no changes given: plan approved as it is\n');
        return { decision: 'grant', scope: 'once', ...who };
      }
      io.write(`  plan approved with changes: ${describeChanges(changes)}\n`);
      return { decision: 'grant', scope: 'once', ...who, changes };
    }
    if (key === 'q' || key === 'ask') {
      const question = await required(d, '  your question for the model: ', 'a question needs its text');
      if (ended(question)) return question.end;
      io.write('  question sent: the model answers it and submits the plan again\n');
      return { decision: 'deny', ...who, reason: question, clarify: true };
    }
    if (key === 'x' || key === 'reject') {
      const reason = await required(
        d,
        '  why is the plan rejected (the model sees it): ',
        'a rejection needs a reason',
      );
      if (ended(reason)) return reason.end;
      io.write('  plan rejected\n');
      return { decision: 'deny', ...who, reason };
    }
    const gaveUp = d.again('please answer a (approve), c (approve with changes), q (ask a question) or x (reject)');
    if (gaveUp) return gaveUp.end;
  }
}

async function required(d: Dialog, ask: string, missing: string): Promise<string | End> {
  for (;;) {
    const text = await d.line(ask);
    if (ended(text)) return text;
    if (text) return text.slice(0, MAX_TEXT_CHARS);
    const gaveUp = d.again(missing);
    if (gaveUp) return gaveUp;
  }
}

/** One part of the changes: asked until it parses and fits the plan with the parts before it. */
async function askPart<T>(
  d: Dialog,
  ask: string,
  parse: (line: string) => T | string,
  fits: (value: T) => string | undefined,
): Promise<T | End> {
  for (;;) {
    const line = await d.line(ask);
    if (ended(line)) return line;
    const value = parse(line);
    const problem = typeof value === 'string' ? value : fits(value);
    if (problem === undefined) return value as T;
    const gaveUp = d.again(problem);
    if (gaveUp) return gaveUp;
  }
}

/**
 * Skip, reorder and edit, each part checked as soon as it is typed against the plan with the parts
 * before it (a reorder that breaks a dependency is refused, naming it) and asked again when wrong.
 */
async function askChanges(d: Dialog, io: TerminalIo, prompt: ApprovalPrompt): Promise<PlanChanges | End | undefined> {
  io.write('  changes (Enter leaves a part as it is)\n');
  const problemOf = (next: PlanChanges): string | undefined => {
    const checked = checkPlanAnswer(prompt.tool, prompt.input, {
      decision: 'grant',
      scope: 'once',
      approver: io.approver,
      channel: 'terminal',
      changes: next,
    });
    return checked.ok ? undefined : checked.problem;
  };
  const changes: PlanChanges = {};
  const skip = await askPart(d, '  skip (task ids, comma-separated): ', idList, (ids) =>
    ids.length === 0 ? undefined : problemOf({ skip: ids }),
  );
  if (ended(skip)) return skip;
  if (skip.length > 0) changes.skip = skip;
  const order = await askPart(d, '  order (every task kept, in the new order, comma-separated): ', idList, (ids) =>
    ids.length === 0 ? undefined : problemOf({ ...changes, order: ids }),
  );
  if (ended(order)) return order;
  if (order.length > 0) changes.order = order;
  for (;;) {
    const edit = await askPart(d, '  edit (id=new title; Enter when done): ', editOf, (e) =>
      e === null ? undefined : problemOf({ ...changes, edit: { ...changes.edit, [e.id]: e.title } }),
    );
    if (ended(edit)) return edit;
    if (edit === null) break;
    changes.edit = { ...changes.edit, [edit.id]: edit.title };
  }
  return Object.keys(changes).length > 0 ? changes : undefined;
}

/** `t2=New title`, null for an empty line (done), or what is wrong with it. */
function editOf(line: string): { id: string; title: string } | null | string {
  if (!line) return null;
  const eq = line.indexOf('=');
  const id = line.slice(0, eq).trim();
  const title = line.slice(eq + 1).trim();
  if (eq < 0 || !PlanTaskId.safeParse(id).success || !title)
    return 'an edit is a task id, =, and the new title (t2=Add the login test)';
  return { id, title: title.slice(0, 300) };
}

/** Task ids from `t1, t3,t2`, or what is wrong with them. */
function idList(line: string): string[] | string {
  if (!line) return [];
  const ids = line.split(/[\s,]+/).filter(Boolean);
  const bad = ids.find((id) => !PlanTaskId.safeParse(id).success);
  if (bad !== undefined) return `"${bad}" is not a task id; name tasks by their ids (t1, t2), comma-separated`;
  return ids;
}

function describeChanges(c: PlanChanges): string {
  return [
    ...(c.skip ? [`skip ${c.skip.join(', ')}`] : []),
    ...(c.order ? [`order ${c.order.join(', ')}`] : []),
    ...(c.edit ? [`edit ${Object.keys(c.edit).join(', ')}`] : []),
  ].join('; ');
}

async function answerEscalation(io: TerminalIo): Promise<ApprovalAnswer> {
  const d = new Dialog(io);
  for (;;) {
    const line = await d.line('> ');
    if (ended(line)) return line.end;
    const choice = CHOICE_KEYS.get(line.toLowerCase());
    if (choice) {
      io.write(`  decided: ${choice}\n`);
      return { decision: 'grant', scope: 'once', approver: io.approver, channel: 'terminal', choice };
    }
    const gaveUp = d.again('please answer r (retry), s (skip) or x (abort)');
    if (gaveUp) return gaveUp.end;
  }
}

const CHOICE_KEYS = new Map<string, RecoveryChoice>([
  ['r', 'retry'],
  ['retry', 'retry'],
  ['s', 'skip'],
  ['skip', 'skip'],
  ['x', 'abort'],
  ['abort', 'abort'],
]);
