/**
 * What kind of failure an error is: it tells the person reading the message what to do next, and
 * it alone decides the exit code (cli/exit-codes.ts), so no command keeps its own list of classes.
 * - `usage`: the command was called wrong or with a bad setting (a flag, the model spec, an API
 *   key, a policy file or rule); nothing ran. Change the command or the setting.
 * - `refused`: the command was understood, but what it asks cannot be done to this run or data
 *   (no such request, the run is over or written by a live process, its log or saved workspace
 *   cannot be trusted, an artifact does not exist). The message says what to do instead.
 * - `environment`: something gatehouse needs outside itself is missing or broke (Docker, the
 *   sandbox, the model provider's stream, the installation key). Fix the machine and try again.
 * - `internal`: a bug in gatehouse (data that does not fit its schema, a daemon answer that is not
 *   a result). Nothing the person did caused it; report it.
 *
 * Paused, over-budget and cancelled runs are not errors: they are how a run ended (its status), and
 * their exit codes come from the same table.
 */
export type ErrorKind = 'usage' | 'refused' | 'environment' | 'internal';

export const ERROR_KINDS: readonly ErrorKind[] = ['usage', 'refused', 'environment', 'internal'];

/**
 * The base of every error gatehouse throws to a person. Subclasses name their kind; the message is
 * theirs and says what happened and what to do. `name` is left to each subclass as it was, since
 * `String(error)` output (logs, recorded events) depends on it.
 */
export abstract class GatehouseError extends Error {
  abstract readonly kind: ErrorKind;
}

/**
 * The kind of anything thrown. What is not a GatehouseError (Node's own errors, and the plain
 * `Error`s some of gatehouse's messages still are) counts as internal: like every kind but usage,
 * it exits 1.
 */
export function errorKindOf(e: unknown): ErrorKind {
  return e instanceof GatehouseError ? e.kind : 'internal';
}
