import { z } from 'zod';
import type { ValidationError } from '@gatehouse/shared';
import { normalisePathPattern } from '../policy/rules';

/**
 * The handoff packet: everything a sub-agent gets, and all it gets. Strict: a field that is not
 * here (a mode, a policy, extra rules) is refused, so a handoff can narrow but never widen.
 */
export const Handoff = z.strictObject({
  task: z.string().min(1).max(20_000).describe('what the sub-agent should do'),
  tools: z.array(z.string().min(1)).min(1).max(32).describe("tools it may use: a subset of this agent's tools"),
  paths: z
    .array(z.string().min(1).max(1024))
    .min(1)
    .max(64)
    .describe('workspace globs it may touch, e.g. ["src/math/**"]'),
  evidence: z
    .array(z.string().regex(/^obs-\d+$/))
    .max(32)
    .default([])
    .describe('observation ids handed over, e.g. ["obs-3"]'),
  budget: z
    .strictObject({
      turns: z.number().int().positive().max(200),
      toolCalls: z.number().int().positive().max(1000),
      tokens: z.number().int().positive(),
      seconds: z
        .number()
        .positive()
        .max(24 * 3600),
    })
    .describe('at most what this agent has left'),
  expect: z.string().min(1).max(4_000).describe('the answer expected back'),
});
export type Handoff = z.infer<typeof Handoff>;

/** What an agent may hand down: its own tools, paths, budget and depth. */
export interface AgentScope {
  runId: string;
  lineage: readonly string[];
  /** 0 for a top-level run. */
  depth: number;
  maxDepth: number;
  surface: readonly string[];
  /** Workspace globs; ['**'] for a top-level run. */
  paths: readonly string[];
  /** `costUsd`: US dollars left of a cost budget (absent: none); a child is handed all of it. */
  remaining: { turns: number; toolCalls: number; tokens: number; seconds: number; costUsd?: number };
  /** Observation ids this agent can hand over. */
  observations: ReadonlySet<string>;
}

/** Refuses any handoff that would give the child more than its parent has. */
export function checkHandoff(h: Handoff, parent: AgentScope): ValidationError[] {
  const errors: ValidationError[] = [];
  const err = (path: string, code: string, message: string) => errors.push({ path, code, message });
  if (parent.depth + 1 > parent.maxDepth)
    err(
      '',
      'depth_exceeded',
      `sub-agents may nest at most ${parent.maxDepth} deep; this agent is at depth ${parent.depth}`,
    );
  h.tools.forEach((t, i) => {
    if (!parent.surface.includes(t))
      err(`tools[${i}]`, 'tool_not_delegable', `${t} is not one of this agent's tools (${parent.surface.join(', ')})`);
  });
  h.paths.forEach((p, i) => {
    if (!withinAny(p, parent.paths))
      err(`paths[${i}]`, 'path_outside_scope', `${p} is not inside this agent's paths (${parent.paths.join(', ')})`);
  });
  h.evidence.forEach((id, i) => {
    if (!parent.observations.has(id))
      err(`evidence[${i}]`, 'unknown_observation', `${id} is not an observation of this run`);
  });
  for (const k of ['turns', 'toolCalls', 'tokens', 'seconds'] as const) {
    if (h.budget[k] > parent.remaining[k])
      err(
        `budget.${k}`,
        'budget_exceeds_parent',
        `${k} ${h.budget[k]} is more than this agent has left (${Math.floor(parent.remaining[k])})`,
      );
  }
  const cost = parent.remaining.costUsd;
  if (cost !== undefined && cost <= 0)
    err('budget', 'budget_exceeds_parent', `this agent has spent its cost budget; no sub-agent can be paid for`);
  return errors;
}

/** Normalised like every workspace path (and every path rule), so `./src/../src/**` is `src/**`. */
export const normaliseGlob = normalisePathPattern;

/**
 * Is every path `child` can match also matched by `parent`? Decided on literal prefixes, which
 * is exact for the shapes people write (`src/**`, `src/a.ts`, `**`) and errs on refusing.
 */
export function within(child: string, parent: string): boolean {
  const c = normaliseGlob(child);
  const p = normaliseGlob(parent);
  if (p === '**') return !c.startsWith('..') && !c.startsWith('/');
  if (c === p) return true;
  if (!p.endsWith('/**')) return false;
  const base = p.slice(0, -2); // "src/"
  return c.startsWith(base) && !literalPrefix(base).includes('*');
}

function withinAny(child: string, parents: readonly string[]): boolean {
  return parents.some((p) => within(child, p));
}

function literalPrefix(p: string): string {
  const i = p.search(/[*?]/);
  return i < 0 ? p : p.slice(0, i);
}
