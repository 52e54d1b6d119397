import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunOutcome } from './run-outcome';

/** A tool error (`isError`): what happened and what to do, as text the calling model reads. */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** A run's outcome as a tool result: the structured outcome, and a text summary for callers that read only text. */
export function outcomeResult(o: RunOutcome, notes: readonly string[] = []): CallToolResult {
  const structured = { ...o, notes: [...notes] };
  return { content: [{ type: 'text', text: summary(o, notes) }], structuredContent: structured };
}

function summary(o: RunOutcome, notes: readonly string[]): string {
  const lines: string[] = [];
  if (o.outcome === 'paused') {
    lines.push(`run ${o.runId} paused: it waits for ${o.pending.length} approval(s).`);
    for (const p of o.pending)
      lines.push(
        `- request ${p.requestId} (run ${p.runId}): ${p.tool} ${JSON.stringify(p.input)}; rule ${p.rule}: ${p.reason}`,
      );
    lines.push(
      'Answer each with the approve tool (runId, requestId, decision); the run resumes after the last answer.',
    );
  } else if (o.outcome === 'running') lines.push(`run ${o.runId} is running.`);
  else {
    lines.push(`run ${o.runId}: ${o.outcome}${o.stopReason ? ` (${o.stopReason})` : ''}`);
    if (o.answer) lines.push(`answer: ${o.answer}`);
    lines.push(`files changed: ${o.filesChanged.length ? o.filesChanged.join(', ') : 'none'}`);
    if (o.diff) lines.push(o.diff.trimEnd());
    if (o.diffTruncated) lines.push(`(diff cut; the whole diff is in ${o.diffFile})`);
    if (o.filesChanged.length) lines.push('The repository is untouched: the diff is the result.');
  }
  for (const n of notes) lines.push(`note: ${n}`);
  return lines.join('\n');
}
