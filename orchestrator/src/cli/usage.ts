import { GatehouseError } from '../errors';

/** A mistake in how a command was called: exit code 2, the message says what to change. */
export class UsageError extends GatehouseError {
  readonly kind = 'usage';
}
