import type { EventDataOf } from '@gatehouse/shared';
import type { ApprovalPolicy, Decision } from '../policy/approval-policy';
import type { Tool } from './tool';
import { redirected, resolutionRecords, type ResolvedRef } from './workspace-paths';

const STRICTNESS: Record<Decision['decision'], number> = { allow: 0, ask: 1, deny: 2 };

export interface PathDecision {
  decision: Decision;
  /** The path whose resolved form decided, when that was stricter than the path as requested. */
  resolvedFrom?: { path: string; real: string };
}

/**
 * The policy's decision on a path tool call: asked about the path as requested and, for each path
 * that leads somewhere else (a symlink on the way), about where it leads. The strictest answer wins
 * (deny > ask > allow); on a tie the requested form's answer stands, so the common case reads as
 * before. A link can make a call stricter, never looser.
 */
export function decideOnPaths(
  decide: (input: unknown) => Decision,
  input: unknown,
  resolved: readonly ResolvedRef[],
): PathDecision {
  let best = decide(input);
  let resolvedFrom: PathDecision['resolvedFrom'];
  const risk = new Set(best.risk);
  for (const ref of redirected(resolved)) {
    const d = decide({ ...(input as Record<string, unknown>), [ref.field]: ref.real });
    for (const line of d.risk) risk.add(line);
    if (STRICTNESS[d.decision] > STRICTNESS[best.decision]) {
      const via = ref.dangling ? ' (through a dangling symbolic link)' : '';
      best = { ...d, reason: `${ref.key} resolves to ${ref.real}${via}: ${d.reason}` };
      resolvedFrom = { path: ref.key, real: ref.real };
    }
  }
  return { decision: { ...best, risk: [...risk] }, ...(resolvedFrom ? { resolvedFrom } : {}) };
}

/**
 * What an approval of this call is bound to: the tool input, plus where its paths led when any led
 * elsewhere. A person's "approve for this run" of `read_file src/link` then does not stand for the
 * same call once the link points somewhere new.
 */
export function boundInput(input: unknown, resolved: readonly ResolvedRef[]): unknown {
  const moved = redirected(resolved);
  if (moved.length === 0) return input;
  return { input, resolved: moved.map((r) => ({ path: r.key, real: r.real })) };
}

/** decideOnPaths for one tool call, asking the run's policy with the shapes approved so far. */
export function decideCall(
  policy: ApprovalPolicy,
  approvedShapes: ReadonlySet<string>,
  tool: Tool<unknown>,
  input: unknown,
  resolved: readonly ResolvedRef[],
): PathDecision {
  const ask = (i: unknown) =>
    policy.decide(
      {
        tool: tool.name,
        input: i,
        readOnly: tool.isReadOnly(i),
        sideEffect: tool.sideEffect,
        ...(tool.hints ? { hints: tool.hints } : {}),
      },
      { approvedShapes },
    );
  return decideOnPaths(ask, input, resolved);
}

/** For the tool context: where each requested path leads, when it is inside the workspace. */
export function realPathLookup(resolved: readonly ResolvedRef[]): (path: string) => string | undefined {
  const reals = new Map<string, string>();
  for (const r of resolved) if (r.real !== undefined && !r.outside) reals.set(r.path, r.real);
  return (p) => reals.get(p);
}

/** The `resolved` field of a tool.validation event, present only when there were paths to resolve. */
export function resolvedField(resolved: readonly ResolvedRef[]): {
  resolved?: EventDataOf<'tool.validation'>['resolved'];
} {
  return resolved.length > 0 ? { resolved: resolutionRecords(resolved) } : {};
}
