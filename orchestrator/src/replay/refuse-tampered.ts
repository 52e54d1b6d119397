import { auditRun } from '../events/audit';
import { installationKey } from '../events/installation';
import type { LogKey } from '../events/key';
import { ReplayError } from './replay-error';

/**
 * A log `gatehouse verify` finds failed (a MAC that does not match, a broken chain, a rewritten
 * head, an artifact changed) is not replayed: an execution replay would run what the edit put there,
 * and a trace or dry-run would vouch for it. A log that verify calls `unanchored` (no key here,
 * another installation's) is replayed: nothing shows it was changed; what verify could not check is
 * returned, for the replay to say.
 */
export function refuseTampered(stateDir: string, runId: string, key: LogKey | undefined): string | undefined {
  const audit = auditRun(stateDir, runId, key ?? installationKey());
  if (audit.verdict === 'unanchored')
    return (
      `run ${runId}'s log is unanchored (${audit.unanchored[0] ?? 'not checkable here'}): nothing shows it ` +
      'was changed, and nothing here vouches for it'
    );
  if (audit.verdict !== 'failed') return undefined;
  throw new ReplayError(
    'refused',
    `run ${runId}'s log fails gatehouse verify (${audit.problems[0] ?? 'tampered'}): a replay of it would not be of ` +
      `what ran. Run gatehouse verify ${runId} for the details`,
  );
}
