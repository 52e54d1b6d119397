import { newId, type Actor, type EventDataOf, type EventEnvelope, type ValidationError } from '@gatehouse/shared';
import { MemoryRecord, recordSha256, type MemoryCitation, type MemoryScope } from './memory-record';
import type { MemoryStore } from './memory-store';
import type { RepositoryIdentity } from './repository-identity';
import { citationProblems } from './verify-citations';

/** Memory as a run has it (`--memory`): where records live, this repository's identity, the recall budget. */
export interface RunMemory {
  store: MemoryStore;
  repository: RepositoryIdentity;
  /** Estimated tokens the remembered block may take in the context. */
  tokenBudget: number;
}

/** What the model proposes with `remember` (tools/builtin/remember.ts). */
export interface RememberProposal {
  text: string;
  scope: MemoryScope;
  confidence: 'low' | 'medium' | 'high';
  expiresInDays: number;
  citations: MemoryCitation[];
}

/** The run's log as memory uses it: its events, and the one event it writes. */
export interface MemoryLog {
  append(
    type: 'memory.stored',
    actor: Actor,
    data: EventDataOf<'memory.stored'>,
    opts?: { causationId?: string | null },
  ): unknown;
  events(): readonly EventEnvelope[];
}

/** What the pipeline gives the `remember` tool: the check of its citations, and the one way to store a record. */
export interface MemoryPort {
  check(citations: readonly MemoryCitation[]): ValidationError[];
  store(proposal: RememberProposal, call: { callId: string; grantEventId: string }): RememberResult;
}

export type RememberResult =
  { ok: true; output: string } | { ok: false; output: string; error: { code: string; message: string } };

const DAY_MS = 86_400_000;

/**
 * The port over one run's log. `store` checks the citations again against the log as it is now
 * (the gate may have taken a while; nothing is stored on the strength of an earlier check), writes
 * the record with its MAC, and records `memory.stored` in the run's log.
 */
export function memoryPort(memory: RunMemory, log: MemoryLog, runId: string): MemoryPort {
  return {
    check: (citations) => citationProblems(citations, log.events(), runId),
    store(p, call) {
      const problems = citationProblems(p.citations, log.events(), runId);
      if (problems.length > 0) {
        const message = problems.map((x) => `${x.path}: ${x.message}`).join('; ');
        return { ok: false, output: '', error: { code: 'unverified', message } };
      }
      const now = new Date();
      const observationIds = [...new Set(p.citations.map((c) => c.observationId))];
      const record = MemoryRecord.parse({
        id: newId('mem'),
        text: p.text,
        scope: p.scope,
        repository: p.scope === 'repository' ? memory.repository.id : null,
        source: { runId, observationIds, citations: p.citations.map((c) => ({ ...c, quote: c.quote.trim() })) },
        confidence: p.confidence,
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + p.expiresInDays * DAY_MS).toISOString(),
        verified: true,
        approvedBy: approvedBy(log.events(), call.grantEventId),
      });
      memory.store.put(record);
      log.append(
        'memory.stored',
        'runtime',
        {
          callId: call.callId,
          record: {
            id: record.id,
            scope: record.scope,
            sha256: recordSha256(record),
            sourceRunId: runId,
            observationIds,
            createdAt: record.createdAt,
          },
          expiresAt: record.expiresAt,
          repository: record.repository,
        },
        { causationId: call.grantEventId },
      );
      return {
        ok: true,
        output:
          `stored ${record.id} (${record.scope}, expires ${record.expiresAt.slice(0, 10)}), ` +
          `supported by ${observationIds.join(', ')}`,
      };
    },
  };
}

/** Who let the record through: the person who granted it, or the policy decision that allowed it. */
function approvedBy(events: readonly EventEnvelope[], grantEventId: string): string {
  const e = events.find((x) => x.id === grantEventId);
  if (e?.type === 'approval.granted') return `${e.data.approver} via ${e.data.channel}`.slice(0, 300);
  if (e?.type === 'tool.approval') return `policy ${e.data.policyId}`.slice(0, 300);
  return `grant ${grantEventId}`.slice(0, 300);
}
