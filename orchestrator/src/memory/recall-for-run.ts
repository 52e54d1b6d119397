import type { EventDataOf } from '@gatehouse/shared';
import type { RunMemory } from './memory-port';
import { MemoryStore } from './memory-store';
import { DEFAULT_MEMORY_TOKEN_BUDGET, rankRecords, recallBlock, usableRecords } from './recall';
import { repositoryIdentity } from './repository-identity';

/**
 * What a new run recalls (recorded as `memory.recalled` right after `run.started`): the records it
 * may see (verified, unexpired, the user's or this repository's), the most relevant first, as many
 * as fit the budget. Refused files (a MAC that does not verify) are named in the event, never used.
 */
export function recallForRun(memory: RunMemory, task: string, now = Date.now()): EventDataOf<'memory.recalled'> {
  const { records, refused } = memory.store.read();
  const usable = usableRecords(records, memory.repository.id, now);
  return recallBlock(rankRecords(usable, task), {
    repository: memory.repository.id,
    tokenBudget: memory.tokenBudget,
    refused: refused.map((r) => `${r.file}: ${r.reason}`.slice(0, 200)),
  });
}

/** The memory of a run started with `--memory`: the installation's store and this repository's identity. */
export async function openRunMemory(o: {
  repoDir: string;
  stateDir?: string | undefined;
  tokenBudget?: number | undefined;
}): Promise<RunMemory> {
  return {
    store: MemoryStore.forInstallation({ stateDir: o.stateDir }),
    repository: await repositoryIdentity(o.repoDir),
    tokenBudget: o.tokenBudget ?? DEFAULT_MEMORY_TOKEN_BUDGET,
  };
}
