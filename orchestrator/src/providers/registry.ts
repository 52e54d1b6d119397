import { AnthropicProvider } from './anthropic';
import { MissingCredentialError, ModelSpecError } from './errors';
import { OpenAIProvider } from './openai';
import { ScriptedProvider, loadScript } from './scripted';
import type { ModelProvider, RetryPolicy } from './types';

export interface CreateProviderOptions {
  /** Where keys and base URLs are read from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Overrides OPENAI_BASE_URL / ANTHROPIC_BASE_URL. */
  baseUrl?: string;
  retry?: RetryPolicy;
  fetch?: typeof fetch;
  /** Resolves a relative scripted:PATH; defaults to process.cwd(). */
  cwd?: string;
  /** Per-attempt request timeout for the HTTP providers (until response headers). */
  timeoutMs?: number;
}

const USAGE =
  'use openai:MODEL (e.g. openai:gpt-4.1; OPENAI_BASE_URL for any OpenAI-compatible server), anthropic:MODEL (e.g. ' +
  'anthropic:claude-sonnet-4-5) or scripted:PATH (a JSON file of turns)';

/**
 * Turns a `--model` spec into a provider. Everything a person must fix (bad spec, missing key,
 * bad script) is thrown here, before any run starts; after this, failures are model events.
 */
export function createProvider(spec: string, opts: CreateProviderOptions = {}): ModelProvider {
  const match = /^([a-z]+):(.*)$/i.exec(spec.trim());
  if (!match) throw new ModelSpecError(`Invalid model "${spec}": ${USAGE}.`);
  const [, prefix = '', rest = ''] = match;
  const kind = prefix.toLowerCase();
  const target = rest.trim();
  if (target === '') throw new ModelSpecError(`Invalid model "${spec}": nothing after "${prefix}:"; ${USAGE}.`);
  const env = opts.env ?? process.env;
  const common = {
    ...(opts.retry ? { retry: opts.retry } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  };

  switch (kind) {
    case 'openai': {
      const apiKey = requireKey(
        env,
        'OPENAI_API_KEY',
        'openai',
        ' (a local OpenAI-compatible server that needs no key accepts any value)',
      );
      const baseUrl = opts.baseUrl ?? nonEmpty(env.OPENAI_BASE_URL);
      return new OpenAIProvider({
        model: target,
        apiKey,
        ...(baseUrl ? { baseUrl } : {}),
        organization: nonEmpty(env.OPENAI_ORG_ID) ?? null,
        project: nonEmpty(env.OPENAI_PROJECT_ID) ?? null,
        ...common,
      });
    }
    case 'anthropic': {
      const apiKey = requireKey(env, 'ANTHROPIC_API_KEY', 'anthropic', '');
      const baseUrl = opts.baseUrl ?? nonEmpty(env.ANTHROPIC_BASE_URL);
      return new AnthropicProvider({ model: target, apiKey, ...(baseUrl ? { baseUrl } : {}), ...common });
    }
    case 'scripted':
      return new ScriptedProvider(loadScript(target, opts.cwd), `scripted:${target}`);
    default:
      throw new ModelSpecError(`Unknown model provider "${kind}" in "${spec}": ${USAGE}.`);
  }
}

function requireKey(env: NodeJS.ProcessEnv, variable: string, provider: string, hint: string): string {
  const key = nonEmpty(env[variable]);
  if (!key)
    throw new MissingCredentialError(
      variable,
      `${variable} is not set: export ${variable}=<your key> to use ${provider}:MODEL${hint}.`,
    );
  return key;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}
