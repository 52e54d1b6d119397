import type { EventDataOf, EventEnvelope, ValidationError } from '@gatehouse/shared';
import { resolvedField } from '../path-decision';
import { jsonSafe } from '../recorded-values';
import { rejectionText, schemaErrors } from '../rejection';
import type { Tool, ToolContext } from '../tool';
import { checkWorkspacePaths, type ResolvedRef } from '../workspace-paths';
import { record } from './record';
import { recordObservation } from './record-observation';
import { toolContext } from './tool-context';
import type { PipelineDeps, Observation, ToolCall } from './types';

/** A call the checks passed: the parsed input, where its paths lead, and the `tool.validation` that says so. */
export interface ValidCall {
  kind: 'valid';
  callId: string;
  tool: Tool<unknown>;
  input: unknown;
  resolved: readonly ResolvedRef[];
  /** The tool context with the resolved paths, for the plan. */
  ctx: ToolContext;
  validationId: string;
}

export type Validated = ValidCall | { kind: 'rejected'; observation: Observation };

/**
 * Phase 1, validate: the tool is known and on this run's surface, the arguments parse and fit its
 * schema, its paths stay inside the workspace, and its own semantic checks pass. The first check
 * that fails records a failed `tool.validation` and the rejection the model reads; a call that
 * passes records one successful `tool.validation`.
 */
export async function validate(
  deps: PipelineDeps,
  call: ToolCall,
  toolName: string,
  intent: EventEnvelope,
): Promise<Validated> {
  const reject = (
    stage: EventDataOf<'tool.validation'>['stage'],
    errors: ValidationError[],
    tool?: Tool<unknown>,
    resolved: readonly ResolvedRef[] = [],
  ): Validated => rejected(deps, call.callId, toolName, intent, stage, errors, tool, resolved);
  const tool = deps.registry.get(toolName);
  if (!tool) {
    return reject('known', [
      { path: 'tool', code: 'unknown_tool', message: `there is no tool named ${JSON.stringify(toolName)}` },
    ]);
  }
  if (!deps.surface.includes(toolName)) {
    return reject('surface', [
      { path: 'tool', code: 'tool_not_available', message: `${toolName} is not available in this run` },
    ]);
  }
  if (call.truncated === true) {
    const message =
      'the call was cut off at the output limit before its arguments ended, so it was not run; make it ' +
      'again with shorter arguments (split large content over several calls)';
    return reject('schema', [{ path: '', code: 'truncated', message }], tool);
  }
  if (call.parseError !== undefined) {
    const message = `the arguments are not valid JSON (${call.parseError})`;
    return reject('schema', [{ path: '', code: 'invalid_json', message }], tool);
  }
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) return reject('schema', schemaErrors(parsed.error), tool);
  const input = parsed.data;
  // Where the call's paths lead is settled first: a path outside the workspace is refused here,
  // and the policy then decides on both the requested and the resolved form.
  const paths = await checkWorkspacePaths(deps.sandbox, tool.workspacePaths?.(input) ?? []);
  if (paths.errors.length > 0) return reject('semantic', paths.errors, tool, paths.resolved);
  const actor = call.actor === 'runtime' ? 'runtime' : 'model';
  // Plan mode: a call outside the approved plan's current task is a deviation (plan/task-scope.ts).
  const deviations =
    deps.planScope?.({
      tool: toolName,
      readOnly: tool.isReadOnly(input),
      paths: paths.resolved.flatMap((r) => [r.key, ...(r.real !== undefined && !r.outside ? [r.real] : [])]),
      actor,
    }) ?? [];
  if (deviations.length > 0) return reject('plan', deviations, tool, paths.resolved);
  const ctx = toolContext(deps, paths.resolved, actor);
  let semantic: ValidationError[] = [];
  try {
    semantic = (await tool.validate?.(input, ctx)) ?? [];
  } catch (e) {
    const message = `could not check the call against the workspace: ${(e as Error).message}`;
    semantic = [{ path: '', code: 'validation_unavailable', message }];
  }
  if (semantic.length > 0) return reject('semantic', semantic, tool, paths.resolved);
  const validated = record(
    deps,
    'tool.validation',
    'runtime',
    {
      callId: call.callId,
      ok: true,
      stage: 'semantic',
      errors: [],
      input: jsonSafe(input),
      ...resolvedField(paths.resolved),
    },
    intent.id,
  );
  return { kind: 'valid', callId: call.callId, tool, input, resolved: paths.resolved, ctx, validationId: validated.id };
}

function rejected(
  deps: PipelineDeps,
  callId: string,
  toolName: string,
  intent: EventEnvelope,
  stage: EventDataOf<'tool.validation'>['stage'],
  errors: ValidationError[],
  tool: Tool<unknown> | undefined,
  resolved: readonly ResolvedRef[],
): Validated {
  const data = { callId, ok: false, stage, errors, ...resolvedField(resolved) };
  const validation = record(deps, 'tool.validation', 'runtime', data, intent.id);
  const text = rejectionText(stage, toolName, errors, { surface: deps.surface, tool, registry: deps.registry });
  const { observation } = recordObservation(deps, {
    callId,
    tool: toolName,
    outcome: 'rejected',
    body: text,
    // The proposed arguments, so the header's args hash names this call (it hashed nothing, the same for all).
    input: intent.type === 'tool.intent' ? intent.data.input : undefined,
    causationId: validation.id,
  });
  return { kind: 'rejected', observation };
}
