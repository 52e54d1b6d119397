import { GatehouseError } from '../errors';

/**
 * Errors thrown while a provider is being set up: they are usage errors a person must fix before
 * any run starts, so they are thrown (not model events). One base class lets the CLI map them all
 * to a usage exit.
 */
export class ProviderSetupError extends GatehouseError {
  override readonly name: string = 'ProviderSetupError';
  readonly kind = 'usage';
}

/** The `--model` spec is not one of the accepted forms. */
export class ModelSpecError extends ProviderSetupError {
  override readonly name = 'ModelSpecError';
}

/** The provider needs an API key that is not in the environment. */
export class MissingCredentialError extends ProviderSetupError {
  override readonly name = 'MissingCredentialError';
  constructor(
    /** The environment variable to set, e.g. `OPENAI_API_KEY`. */
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/** A scripted-model file is missing, not JSON, or not a valid script. */
export class ScriptError extends ProviderSetupError {
  override readonly name = 'ScriptError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}
