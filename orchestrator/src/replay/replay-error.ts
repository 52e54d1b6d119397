import { GatehouseError, type ErrorKind } from '../errors';

/**
 * Why a replay could not be made: `usage` for a bad option (a mode this build lacks, a policy file
 * that does not load, a missing --model), `refused` for a log that cannot be replayed that way.
 */
export class ReplayError extends GatehouseError {
  override readonly name = 'ReplayError';
  constructor(
    readonly kind: Extract<ErrorKind, 'usage' | 'refused'>,
    message: string,
  ) {
    super(message);
  }
}
