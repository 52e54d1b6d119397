export * from './types';
export { ProviderSetupError, ModelSpecError, MissingCredentialError, ScriptError } from './errors';
export { createProvider, type CreateProviderOptions } from './registry';
export { OpenAIProvider, OPENAI_DEFAULT_BASE_URL, toChatRequest, type OpenAIProviderOptions } from './openai';
export {
  AnthropicProvider,
  ANTHROPIC_DEFAULT_BASE_URL,
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  toMessagesRequest,
  type AnthropicProviderOptions,
} from './anthropic';
export { ScriptedProvider, ScriptSchema, loadScript, parseScript, type Script, type ScriptTurn } from './scripted';
export { withRetries, retryDelay } from './retry';
export { parseRetryAfter } from './retry-after';
