import type { EventEnvelope } from '@gatehouse/shared';
import { LogKey } from '../events/key';
import type { ToolRegistry } from '../tools/registry';
import { chooseWorkspace } from './restore-point';

/**
 * How many lost sandboxes a run replaces, and for how long: a sandbox that keeps dying (a command
 * that kills it, an engine that is failing) must end the run, not keep it going forever.
 */
export interface SandboxReplacementBounds {
  /** Fresh sandboxes per run at most, over its whole life (every process that drove it). */
  max: number;
  /** No replacement once this long has passed since the run's first lost sandbox. */
  windowMs: number;
}

export const DEFAULT_SANDBOX_REPLACEMENTS: SandboxReplacementBounds = { max: 3, windowMs: 15 * 60_000 };

/** The bounds in force: `GATEHOUSE_SANDBOX_REPLACEMENTS=N` sets the count (0 turns replacing off). */
export function sandboxReplacementBounds(env: NodeJS.ProcessEnv = process.env): SandboxReplacementBounds {
  const raw = env.GATEHOUSE_SANDBOX_REPLACEMENTS;
  if (raw === undefined || raw === '') return DEFAULT_SANDBOX_REPLACEMENTS;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0 || n > 100)
    throw new Error(`GATEHOUSE_SANDBOX_REPLACEMENTS must be a whole number from 0 to 100, not ${JSON.stringify(raw)}`);
  return { ...DEFAULT_SANDBOX_REPLACEMENTS, max: n };
}

export type Replacement = { replace: true; attempt: number } | { replace: false; why: string };

/**
 * Whether the bounds allow one more fresh sandbox, from the log alone: every `sandbox.lost` in it
 * (the one just recorded included) counts, so the bound holds across processes and takeovers.
 */
export function replacementAllowed(
  events: readonly EventEnvelope[],
  bounds: SandboxReplacementBounds,
  now = Date.now(),
): Replacement {
  const losses = events.filter((e) => e.type === 'sandbox.lost');
  if (bounds.max === 0)
    return { replace: false, why: 'replacing a lost sandbox is off (GATEHOUSE_SANDBOX_REPLACEMENTS=0)' };
  if (losses.length > bounds.max)
    return {
      replace: false,
      why: `the run lost ${losses.length} sandboxes and at most ${bounds.max} are replaced`,
    };
  const first = losses[0] ? Date.parse(losses[0].ts) : now;
  if (now - first > bounds.windowMs)
    return {
      replace: false,
      why:
        `its first sandbox was lost ${Math.round((now - first) / 1000)} s ago, and none is replaced ` +
        `later than ${Math.round(bounds.windowMs / 1000)} s after that`,
    };
  return { replace: true, attempt: losses.length };
}

/**
 * After the run's sandbox was lost: continue in a fresh one (resume from the last checkpoint), or
 * end the run, and why. Only a top-level run continues (a sub-agent's loss is its parent's to
 * judge, as a failed call), never a cancelled one, within the bounds, and only when the workspace
 * can be put back as resume would: every completed change covered by a checkpoint.
 */
export async function afterSandboxLoss(o: {
  events: readonly EventEnvelope[];
  runDir: string;
  stateDir: string;
  registry: ToolRegistry;
  depth: number;
  cancelled: boolean;
  bounds?: SandboxReplacementBounds;
}): Promise<Replacement> {
  if (o.cancelled) return { replace: false, why: 'the run was being cancelled' };
  if (o.depth > 0)
    return { replace: false, why: "a sub-agent's sandbox is not replaced: its parent sees the call fail" };
  const allowed = replacementAllowed(o.events, o.bounds ?? sandboxReplacementBounds());
  if (!allowed.replace) return allowed;
  const restore = await chooseWorkspace(o.runDir, o.events, o.registry, LogKey.load({ stateDir: o.stateDir }));
  if ('refusal' in restore) return { replace: false, why: restore.refusal };
  return allowed;
}
