import { errorKindOf, type ErrorKind } from '../errors';

/** How a run ended: `gatehouse run` and `resume` exit with its status. */
type RunStatus = 'final' | 'failed' | 'paused' | 'partial' | 'cancelled';
/** A run whose environment could not be prepared (setup or preflight failed): nothing reached the model. */
type RunSetupFailed = 'setup_failed';
/** `gatehouse verify`'s verdicts besides `failed` (tampered or torn), which runs share. */
type VerifyVerdict = 'intact' | 'unanchored';

/**
 * What a command can end with: plain success, a run's status, a verify verdict, or the kind of
 * error that stopped it. Statuses and verdicts are spelled out rather than imported; run.ts and
 * verify.ts pass theirs to exitCodeFor, so the compiler catches one this table lacks.
 */
export type Outcome = 'ok' | RunStatus | RunSetupFailed | VerifyVerdict | ErrorKind;

/**
 * Every exit code the CLI promises (README), in one table. Scripts and CI branch on these numbers:
 * changing one is a breaking change.
 */
const EXIT_CODES = {
  ok: 0,
  // gatehouse run / resume
  final: 0,
  failed: 1,
  paused: 3,
  partial: 4,
  cancelled: 130,
  setup_failed: 5,
  // gatehouse verify (its `failed`, tampered or torn, is the row above)
  intact: 0,
  unanchored: 3,
  // errors: only a usage error (nothing ran; change the command) has its own code
  usage: 2,
  refused: 1,
  environment: 1,
  internal: 1,
} as const satisfies Record<Outcome, number>;

export function exitCodeFor(outcome: Outcome): number {
  return EXIT_CODES[outcome];
}

/** The exit code for an error that ended a command: from its kind. */
export function exitCodeOfError(e: unknown): number {
  return exitCodeFor(errorKindOf(e));
}
