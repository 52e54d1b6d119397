import { canonicalJson, type PrimitiveName } from '@gatehouse/shared';
import { StateTracker } from '../events/state';
import type { ShellClassifier } from '../policy/shell/types';
import type { ToolContext } from '../tools/tool';
import type { ToolRegistry } from '../tools/registry';
import type { RecordedExecution } from './recorded-executions';

/**
 * Whether a recorded call is read-only, by the project's own classification and nothing new: a tool
 * that says so for this input (Tool.isReadOnly), or a `bash` line the policy's shell classifier
 * finds wholly read-only and could follow to the end (as the policy engine judges it). A tool this
 * build does not know is not read-only.
 */
export function isReadOnlyCall(
  registry: ToolRegistry,
  classifier: ShellClassifier,
  tool: string,
  input: unknown,
): boolean {
  const t = registry.get(tool);
  if (!t) return false;
  if (t.isReadOnly(input)) return true;
  if (tool !== 'bash') return false;
  const command = (input as { command?: unknown } | null)?.command;
  if (typeof command !== 'string') return false;
  const analysis = classifier.classify(command);
  return analysis.followable && analysis.class === 'read-only' && analysis.writes.length === 0;
}

/** Primitives the daemon runs without writing anything, whatever their input. */
const READ_PRIMITIVES: ReadonlySet<string> = new Set<PrimitiveName>([
  'read_file',
  'list',
  'glob',
  'grep',
  'changes',
  'resolve',
]);

/**
 * Whether what a replay would SEND for a recorded execution is read-only. The replay sends the
 * recorded primitive input verbatim (`tool.execution.started`), so that is what is judged, not the
 * call's intent: a log whose execution says something other than its intent (edited, or from a
 * gatehouse that planned differently) must not run a write under a read-only intent's name.
 *  - a primitive that cannot write (read_file, list, grep, …) is read-only whatever its input;
 *  - `exec` is read-only only when it is exactly what this build's tool plans for the call's
 *    validated input (the same command, environment with the git guards, cwd), that call is
 *    read-only by isReadOnlyCall (the tool, or the shell classifier for `bash`), and the recorded
 *    run did not see it change any file;
 *  - anything else (a write primitive, an unknown one) is not.
 */
export function isReadOnlyExecution(
  registry: ToolRegistry,
  classifier: ShellClassifier,
  call: RecordedExecution,
): boolean {
  const sent = call.started;
  if (READ_PRIMITIVES.has(sent.primitive)) return true;
  if (sent.primitive !== 'exec') return false;
  // The recorded run saw it change files: whatever the classifier says of the line (a repository's
  // .npmrc makes `npm ls` write its logs into the workspace), it is not read-only here.
  if ((call.completed?.filesChanged.length ?? 0) > 0) return false;
  const tool = registry.get(call.tool);
  if (!tool) return false;
  const parsed = tool.input.safeParse(call.toolInput);
  if (!parsed.success) return false;
  let planned;
  try {
    planned = tool.plan(parsed.data, planContext(call.byRuntime ? 'runtime' : 'model'));
  } catch {
    return false;
  }
  if (planned.executor !== 'sandbox' || planned.primitive !== 'exec') return false;
  if (canonicalJson(planned.input) !== canonicalJson(sent.input)) return false;
  return isReadOnlyCall(registry, classifier, call.tool, parsed.data);
}

/** Enough of a ToolContext to plan an exec call again: its input depends on the call and who made it only. */
function planContext(actor: 'model' | 'runtime'): ToolContext {
  return {
    actor,
    state: new StateTracker().state,
    limits: { defaultTimeoutMs: 1, maxTimeoutMs: 1, observationBudget: 1, maxReadLines: 1 },
    peek: () => Promise.reject(new Error('a replay does not read the workspace to plan a call')),
    realPath: () => undefined,
  };
}
