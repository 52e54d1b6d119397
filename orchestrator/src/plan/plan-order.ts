/**
 * The dependency graph of a plan: its cycles, and where a list of tasks puts a task before one it
 * depends on. Tasks run in the order of the list (the submitted one, or an approver's reorder), so
 * an order is valid only when every dependency comes first. Only dependencies on tasks in the list
 * count here: a dependency on a missing id is reported where ids are checked.
 */
interface Node {
  id: string;
  dependsOn?: readonly string[];
}

/** Every dependency cycle, each once, named in order: `["t1", "t2", "t3", "t1"]` (t1 depends on t2…). */
export function dependencyCycles(tasks: readonly Node[]): string[][] {
  const deps = new Map<string, readonly string[]>();
  for (const t of tasks) if (!deps.has(t.id)) deps.set(t.id, t.dependsOn ?? []);
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  // At most 7 tasks reach here in a valid plan; the search is still linear in edges for larger input.
  const visit = (id: string): void => {
    state.set(id, 'visiting');
    stack.push(id);
    for (const next of deps.get(id) ?? []) {
      if (!deps.has(next) || next === id) continue;
      const s = state.get(next);
      if (s === 'visiting') {
        const cycle = stack.slice(stack.indexOf(next));
        const key = canonical(cycle);
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...cycle, next]);
        }
      } else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const id of deps.keys()) if (!state.has(id)) visit(id);
  return cycles;
}

/** A cycle as people read it: "t1 → t2 → t3 → t1". */
export function cycleText(cycle: readonly string[]): string {
  return cycle.join(' → ');
}

/** A task listed before a task it depends on. */
export interface OrderViolation {
  task: string;
  dependsOn: string;
}

/**
 * Every place the list puts a task before one it depends on (self-dependencies and missing ids are
 * other problems, not order). Empty: the order respects every dependency.
 */
export function orderViolations(tasks: readonly Node[]): OrderViolation[] {
  const position = new Map<string, number>();
  tasks.forEach((t, i) => {
    if (!position.has(t.id)) position.set(t.id, i);
  });
  const out: OrderViolation[] = [];
  tasks.forEach((t, i) => {
    for (const dep of t.dependsOn ?? []) {
      const at = position.get(dep);
      if (at !== undefined && dep !== t.id && at > i) out.push({ task: t.id, dependsOn: dep });
    }
  });
  return out;
}

/** The rotation of a cycle that starts at its smallest id, so each cycle is reported once. */
function canonical(cycle: readonly string[]): string {
  let start = 0;
  cycle.forEach((id, i) => {
    if (id < (cycle[start] as string)) start = i;
  });
  return [...cycle.slice(start), ...cycle.slice(0, start)].join('\u0000');
}
