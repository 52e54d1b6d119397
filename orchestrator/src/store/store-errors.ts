import { GatehouseError } from '../errors';

/** `--store` (or GATEHOUSE_STORE) is not a NATS URL: nothing ran. */
export class StoreUrlError extends GatehouseError {
  readonly kind = 'usage';
  constructor(message: string) {
    super(message);
    this.name = 'StoreUrlError';
  }
}

/** The store could not be reached or used (no server, no JetStream, a stream that is not safe to use). */
export class StoreUnavailableError extends GatehouseError {
  readonly kind = 'environment';
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Another writer appended to this run in the store (a worker that took the run over): this process
 * no longer owns the run and must not act for it. Refused, like a run written by a live process.
 */
export class RunFencedError extends GatehouseError {
  readonly kind = 'refused';
  constructor(
    readonly runId: string,
    detail: string,
  ) {
    super(
      `run ${runId} was taken over by another writer (${detail}); this process stops without executing ` +
        `anything more. See where it runs now with \`gatehouse show ${runId} --store URL\`.`,
    );
    this.name = 'RunFencedError';
  }
}

/** A run the store does not hold. */
export class RunNotStoredError extends GatehouseError {
  readonly kind = 'refused';
  constructor(message: string) {
    super(message);
    this.name = 'RunNotStoredError';
  }
}
