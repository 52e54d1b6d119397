import type { LocalResult } from '../tools/tool';
import { resumeChild, runChild } from './child-run';
import type { Handoff } from './handoff';
import { spawnedBy, type ParentRun } from './parent-run';
import { Semaphore } from './semaphore';

/**
 * The runner behind the `delegate` tool. Each child gets its own run id and log (parentRunId on
 * every event), its own sandbox holding a copy of the parent's workspace as it is now, a context
 * built from the handoff alone, and the parent's policy narrowed to the handed-over paths. The
 * child's answer comes back as the observation; its changed files inside its paths are written
 * into the parent's workspace by the parent's own pipeline (read, then write_file: every write is
 * decided by the parent's policy). At most `maxParallel` children run at once.
 */
export interface Delegator {
  run(h: Handoff, callId: string, signal?: AbortSignal): Promise<LocalResult>;
  /** Resume: continues the child of an unfinished delegate call; undefined if it has none. */
  resume(callId: string, signal?: AbortSignal): Promise<LocalResult | undefined>;
}

export function createDelegator(p: ParentRun): Delegator {
  const slots = new Semaphore(p.maxParallel);
  // Children are numbered in call order, claimed before any waiting (parallel calls have not
  // logged their spawn yet); a resumed parent continues after the children its log holds.
  let nextChild: number | undefined;
  // Budgets of children started but not yet on record: parallel calls were each checked against
  // the same remainder, so the last word is here, before any waiting.
  const inFlight = { turns: 0, toolCalls: 0, tokens: 0 };
  return {
    async run(h, callId, signal) {
      const left = p.scope().remaining;
      const over = (['turns', 'toolCalls', 'tokens'] as const).find((k) => h.budget[k] > left[k] - inFlight[k]);
      if (over)
        return {
          ok: false,
          output: '',
          error: {
            code: 'budget_exceeds_parent',
            message:
              `budget.${over} ${h.budget[over]} is more than this agent has left once its other sub-agents' ` +
              `budgets are counted (${left[over] - inFlight[over]})`,
          },
        };
      for (const k of ['turns', 'toolCalls', 'tokens'] as const) inFlight[k] += h.budget[k];
      const index = nextChild ?? spawnedSoFar(p);
      nextChild = index + 1;
      const provider = p.env.provider.forChild?.(index) ?? p.env.provider;
      const release = await slots.acquire();
      let recorded = false;
      const unreserve = (): void => {
        if (recorded) return;
        recorded = true;
        for (const k of ['turns', 'toolCalls', 'tokens'] as const) inFlight[k] -= h.budget[k];
      };
      try {
        return await runChild(p, h, callId, provider, signal ?? p.env.signal, unreserve);
      } finally {
        unreserve();
        release();
      }
    },
    async resume(callId, signal) {
      const release = await slots.acquire();
      try {
        return await resumeChild(p, callId, signal ?? p.env.signal);
      } finally {
        release();
      }
    },
  };
}

/** How many children this run has started (a scripted child is picked by this index). */
function spawnedSoFar(p: ParentRun): number {
  return p.log.events().filter((e) => spawnedBy(e, p.runId)).length;
}
