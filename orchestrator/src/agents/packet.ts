import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import type { Handoff } from './handoff';

export interface Evidence {
  id: string;
  sha256: string;
  content: string;
}

/** The hash that names a handoff in both logs: the packet as validated, evidence by hash. */
export function handoffHash(h: Handoff, evidence: readonly Evidence[]): string {
  return sha256Hex(canonicalJson({ ...h, evidence: evidence.map((e) => ({ id: e.id, sha256: e.sha256 })) }));
}

/**
 * The sub-agent's task, built from the handoff packet alone: it never sees its parent's
 * transcript, only what it was handed — the task, the expected answer, its scope, and each piece
 * of evidence with the hash it was handed under.
 */
export function childTask(h: Handoff, evidence: readonly Evidence[], parentRunId: string): string {
  const lines = [
    h.task,
    '',
    `You are a sub-agent of run ${parentRunId}. Expected answer: ${h.expect}`,
    `You may change only: ${h.paths.join(', ')}. Tools: ${h.tools.join(', ')}.`,
    `Budget: ${h.budget.turns} turns, ${h.budget.toolCalls} tool calls.`,
  ];
  if (evidence.length > 0) {
    lines.push('', 'Evidence handed to you (from the parent run, by reference; cite it as parent:<id>):');
    for (const e of evidence) lines.push(`--- parent:${e.id} sha256:${e.sha256.slice(0, 16)}`, e.content);
  }
  return lines.join('\n');
}
