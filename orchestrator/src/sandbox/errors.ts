import { GatehouseError, type ErrorKind } from '../errors';

/** Failures of the sandbox layer, each saying what happened and what to do about it. */
export class SandboxError extends GatehouseError {
  override readonly name: string = 'SandboxError';
  readonly kind: ErrorKind = 'environment';
}

/** The container died or stopped sending heartbeats; pending invocations fail with this. */
export class SandboxLostError extends SandboxError {
  override readonly name = 'SandboxLostError';
  constructor(
    readonly sandboxId: string,
    readonly reason: string,
  ) {
    super(`sandbox ${sandboxId} was lost: ${reason}`);
  }
}

/** The daemon answered with something that is not a valid result. */
export class ProtocolError extends SandboxError {
  override readonly name = 'ProtocolError';
  override readonly kind = 'internal';
}

export class DockerUnavailableError extends SandboxError {
  override readonly name = 'DockerUnavailableError';
}
