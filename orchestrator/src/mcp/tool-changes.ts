import { canonicalJson, type EventDataOf } from '@gatehouse/shared';
import { shownDescription, type ListedTool } from './mcp-tool';

type Shown = EventDataOf<'mcp.listed'>['tools'][number];
export type ToolChange = 'description' | 'inputSchema' | 'annotations' | 'missing';

/**
 * What differs between a tool as the model was shown it (the run's first `mcp.listed`) and as its
 * server offers it now: the shown description, the input schema, the annotations (they feed the
 * policy), or the tool is gone. Empty: the same tool.
 */
export function toolChanges(shown: Shown, now: ListedTool | undefined): ToolChange[] {
  if (!now) return ['missing'];
  const changes: ToolChange[] = [];
  if (shownDescription(now) !== shown.description) changes.push('description');
  if (canonicalJson(now.inputSchema) !== canonicalJson(shown.inputSchema)) changes.push('inputSchema');
  if (canonicalJson(now.annotations ?? {}) !== canonicalJson(shown.annotations ?? {})) changes.push('annotations');
  return changes;
}

const WORDS: Record<ToolChange, string> = {
  description: 'its description',
  inputSchema: 'its input schema',
  annotations: 'its annotations',
  missing: 'the server no longer offers it',
};

/** Why a call to a changed tool was not run, and what to do: for the model and whoever reads the log. */
export function changedToolMessage(name: string, changes: readonly ToolChange[], why?: string): string {
  const what = changes.includes('missing')
    ? why
      ? `its server could not be listed again (${why})`
      : 'the server no longer offers it'
    : `${changes.map((c) => WORDS[c]).join(' and ')} changed`;
  return (
    `not run: the MCP tool ${name} is not the one this run was shown before it was resumed (${what}). ` +
    `The tool is kept as it was shown, and every call to it is refused; nothing was sent to the server. ` +
    `Go on without it, or start a new run to use the tool as the server offers it now.`
  );
}
