import type { ShellClassifier } from '../policy/shell/types';
import type { ToolRegistry } from '../tools/registry';

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
