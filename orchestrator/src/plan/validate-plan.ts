import { PlanTask } from '@gatehouse/shared';
import type { z } from 'zod';
import { globProblem } from '../config/glob-syntax';
import { cycleText, dependencyCycles, orderViolations } from './plan-order';
import type { PlanCheck, PlanScope } from './plan-types';
import { vagueTitleProblem } from './vague-title';

export { orderViolations, type OrderViolation } from './plan-order';

/** The spec's sizing rule: one task is no plan, fifty is no reviewable one. */
export const MIN_TASKS = 3;
export const MAX_TASKS = 7;

/** Past this many submitted tasks only the first ones are checked (the count alone already refuses it). */
const CHECKED_TASKS = 20;
/** A plan with more problems than this lists these and says how many more (the model revises anyway). */
const MAX_PROBLEMS = 40;

const TASK_FIELDS = Object.keys(PlanTask.shape).join(', ');

/**
 * submit_plan's input checked as a plan: its tasks, or every problem with it, each saying what to
 * change (the model sees them all in one rejected observation and revises the plan once).
 */
export function validatePlan(input: unknown, scope: PlanScope): PlanCheck {
  const problems: string[] = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, problems: ['submit_plan takes an object {"tasks": [...]}: put the tasks in "tasks"'] };
  for (const key of Object.keys(input))
    if (key !== 'tasks')
      problems.push(`unknown field ${JSON.stringify(key)}: submit_plan takes only "tasks" (a list of 3-7 tasks)`);
  const raw = (input as { tasks?: unknown }).tasks;
  if (!Array.isArray(raw)) {
    problems.push(
      raw === undefined
        ? 'no "tasks": submit the plan as {"tasks": [{"id": "t1", "title": "…"}, …]}'
        : `"tasks" must be a list of tasks, got ${typeName(raw)}`,
    );
    return { ok: false, problems };
  }
  if (raw.length < MIN_TASKS || raw.length > MAX_TASKS)
    problems.push(
      `the plan has ${raw.length} task${raw.length === 1 ? '' : 's'}; a plan has ${MIN_TASKS} to ${MAX_TASKS}: ` +
        (raw.length < MIN_TASKS
          ? 'split the work into concrete steps that can each be checked'
          : 'merge related steps or leave out what the goal does not need, so a person can review every task'),
    );
  if (raw.length > CHECKED_TASKS)
    problems.push(`only the first ${CHECKED_TASKS} of the ${raw.length} tasks were checked`);

  const tasks: PlanTask[] = [];
  raw.slice(0, CHECKED_TASKS).forEach((item, i) => {
    const parsed = PlanTask.safeParse(item);
    if (parsed.success) tasks.push(parsed.data);
    else problems.push(...parsed.error.issues.map((issue) => `${taskName(item, i)}: ${issueText(issue, item)}`));
  });
  // Cross-task checks need every task readable; shape problems come first and are enough to revise.
  if (tasks.length === Math.min(raw.length, CHECKED_TASKS)) problems.push(...taskProblems(tasks, scope));
  if (problems.length > 0) return { ok: false, problems: bounded(problems) };
  return { ok: true, tasks };
}

/** What is wrong with well-formed tasks: vague titles, ids, dependencies, order, tools, paths. */
function taskProblems(tasks: readonly PlanTask[], scope: PlanScope): string[] {
  const problems: string[] = [];
  const firstAt = new Map<string, number>();
  tasks.forEach((t, i) => {
    const name = `task ${i + 1} (${t.id})`;
    const at = firstAt.get(t.id);
    if (at !== undefined)
      problems.push(`${name}: the id ${t.id} is already task ${at + 1}'s: give each task its own id`);
    else firstAt.set(t.id, i);
    const vague = vagueTitleProblem(t.title);
    if (vague) problems.push(`${name}: ${vague}`);
    if (t.check !== undefined && t.check.trim() === '')
      problems.push(`${name}: the check is blank: give a command whose exit status 0 proves the task, or leave it out`);
    else if (t.check !== undefined && !scope.tools.includes('bash'))
      problems.push(`${name}: a check is a command, and this run has no bash to run it: leave the check out`);
    const deps = new Set<string>();
    for (const dep of t.dependsOn) {
      if (dep === t.id) problems.push(`${name}: it depends on itself: remove ${dep} from its dependsOn`);
      else if (!tasks.some((o) => o.id === dep))
        problems.push(`${name}: it depends on ${dep}, which is not a task of this plan (its ids: ${ids(tasks)})`);
      else if (deps.has(dep)) problems.push(`${name}: ${dep} is listed twice in dependsOn: list it once`);
      deps.add(dep);
    }
    problems.push(...toolProblems(name, t, scope), ...pathProblems(name, t));
  });
  const cycles = dependencyCycles(tasks);
  for (const c of cycles)
    problems.push(
      `dependency cycle ${cycleText(c)} (each depends on the next): no task in it could ever start; ` +
        'remove one of these dependencies',
    );
  if (cycles.length === 0)
    for (const v of orderViolations(tasks))
      problems.push(
        `${v.task} depends on ${v.dependsOn}, which comes after it: tasks run in the order listed, so list ` +
          `${v.dependsOn} before ${v.task}`,
      );
  return problems;
}

function toolProblems(name: string, t: PlanTask, scope: PlanScope): string[] {
  if (t.tools === undefined) return [];
  if (t.tools.length === 0)
    return [`${name}: "tools" is empty: list the tools the task needs, or leave "tools" out to allow the run's`];
  const known = new Set(scope.tools);
  return [...new Set(t.tools)]
    .filter((tool) => !known.has(tool))
    .map(
      (tool) =>
        `${name}: it names the tool ${JSON.stringify(tool)}, which this run does not have ` +
        `(the run's tools: ${scope.tools.join(', ') || 'none'})`,
    );
}

function pathProblems(name: string, t: PlanTask): string[] {
  if (t.paths === undefined) return [];
  if (t.paths.length === 0)
    return [`${name}: "paths" is empty: list the workspace globs it touches, or leave "paths" out`];
  return t.paths.flatMap((p) => {
    // Task paths are matched as the policy matches paths (policy/rules.ts): `*`, `**` and `?` only.
    const problem =
      globProblem(p) ??
      (/[[\]{}\\]/.test(p) ? 'only *, ** and ? are wildcards here; write one glob per alternative' : undefined);
    return problem ? [`${name}: path ${JSON.stringify(p)}: ${problem} (paths are workspace globs such as src/**)`] : [];
  });
}

/** `task 2 (t2)` when the id can be read, else `task 2`. */
function taskName(item: unknown, i: number): string {
  const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
  return typeof id === 'string' && /^[\w.-]{1,32}$/.test(id) ? `task ${i + 1} (${id})` : `task ${i + 1}`;
}

function issueText(issue: z.core.$ZodIssue, item: unknown): string {
  const field = issue.path.map(String).join('.');
  if (issue.path.length === 0 && (typeof item !== 'object' || item === null || Array.isArray(item)))
    return `expected a task object {"id": "t1", "title": "…"}, got ${typeName(item)}`;
  if (issue.code === 'unrecognized_keys')
    return (
      `unknown field${issue.keys.length === 1 ? '' : 's'} ` +
      `${issue.keys.map((k) => JSON.stringify(k)).join(', ')} (a task has ${TASK_FIELDS})`
    );
  if (
    issue.code === 'invalid_type' &&
    issue.path.length === 1 &&
    !Object.hasOwn(item as object, issue.path[0] as string)
  )
    return `${field} is missing`;
  return `${field || 'the task'}: ${issue.message}`;
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : typeof v;
}

function ids(tasks: readonly PlanTask[]): string {
  return [...new Set(tasks.map((t) => t.id))].join(', ');
}

function bounded(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more problems`];
}
