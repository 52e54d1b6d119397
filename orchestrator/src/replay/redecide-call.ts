import { actionHash, workspaceKey } from '@gatehouse/shared';
import type { ApprovalPolicy } from '../policy/approval-policy';
import { boundInput, decideCall } from '../tools/path-decision';
import type { ToolRegistry } from '../tools/registry';
import { schemaErrors } from '../tools/rejection';
import { outsideErrors, resolutionErrors, type ResolvedRef, type WorkspacePathRef } from '../tools/workspace-paths';
import { validationRule, type RecordedCall, type ReplayedDecision } from './recorded-calls';

/** What deciding a recorded call again needs: the run's tools and surface, the policy, the shapes approved by then. */
export interface RedecideDeps {
  registry: ToolRegistry;
  surface: readonly string[];
  policy: ApprovalPolicy;
  approvedShapes: ReadonlySet<string>;
}

export interface Redecided {
  now: ReplayedDecision;
  /** The hash an approval of the call would be bound to, once it validates (null when it does not). */
  actionHash: string | null;
}

const rejected = (codes: ReadonlyArray<{ code: string }>): Redecided => ({
  now: { decision: 'rejected', rule: validationRule(codes), by: 'runtime' },
  actionHash: null,
});

/**
 * A recorded call through validation and the policy again, with no sandbox (tools/pipeline/validate.ts
 * and decide.ts are the live path). What needs no workspace is checked again: the tool is known and
 * on the run's surface, its arguments came whole and fit the schema, its paths stay inside the
 * workspace as written. What needs the workspace is taken from the recorded `tool.validation`:
 * where each path resolved (symlinks), and the tool's own semantic checks (an edit of a file read
 * first and unchanged since, a handoff within the agent's scope); a call they refused then is
 * refused now with the same codes. The policy then decides on the input as requested and on where
 * its paths led, with the shapes a person had approved by then (confirm-novel), as live.
 */
export function redecideCall(call: RecordedCall, d: RedecideDeps): Redecided {
  const name = call.intent.data.tool;
  const tool = d.registry.get(name);
  if (!tool) return rejected([{ code: 'unknown_tool' }]);
  if (!d.surface.includes(name)) return rejected([{ code: 'tool_not_available' }]);
  if (call.modelCall?.truncated) return rejected([{ code: 'truncated' }]);
  if (call.modelCall?.parseError !== undefined) return rejected([{ code: 'invalid_json' }]);
  const parsed = tool.input.safeParse(call.intent.data.input);
  if (!parsed.success) return rejected(schemaErrors(parsed.error));
  const input = parsed.data;
  const refs = tool.workspacePaths?.(input) ?? [];
  const outside = outsideErrors(refs);
  if (outside.length > 0) return rejected(outside);
  const resolved = recordedResolution(
    call,
    refs.filter((r) => r.resolve),
  );
  const unresolvable = resolutionErrors(resolved);
  if (unresolvable.length > 0) return rejected(unresolvable);
  // The tool's own checks read the workspace: their recorded verdict stands. So does a plan run's
  // deviation (stage `plan`): the task's scope is the approved plan's, which a new policy does not change.
  const v = call.validation?.data;
  if (v && !v.ok && (v.stage === 'semantic' || v.stage === 'plan')) return rejected(v.errors);
  const { decision } = decideCall(d.policy, d.approvedShapes, tool, input, resolved);
  return {
    now: { decision: decision.decision, rule: decision.policyId.slice(0, 2000), by: 'policy' },
    actionHash: actionHash({ name: tool.name, input: boundInput(input, resolved) }),
  };
}

/**
 * Where the call's paths resolved, as its `tool.validation` recorded them (in the order the paths
 * were asked). A call whose validation never got that far has none: it is decided on its paths as
 * requested, which is all that can be known without a sandbox.
 */
function recordedResolution(call: RecordedCall, wanted: readonly WorkspacePathRef[]): ResolvedRef[] {
  const records = call.validation?.data.resolved ?? [];
  if (records.length !== wanted.length) return [];
  return wanted.map((ref, i) => ({ ...records[i]!, path: ref.path, field: ref.field, key: workspaceKey(ref.path) }));
}
