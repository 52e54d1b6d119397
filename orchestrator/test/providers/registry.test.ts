import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic';
import { MissingCredentialError, ModelSpecError, ProviderSetupError, ScriptError } from '../../src/providers/errors';
import { OpenAIProvider } from '../../src/providers/openai';
import { createProvider } from '../../src/providers/registry';
import { ScriptedProvider } from '../../src/providers/scripted';
import { FakeServer, collect, last, sse } from './fake-server';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-registry-'));
writeFileSync(path.join(dir, 'demo.json'), JSON.stringify({ turns: [{ final: 'hello' }] }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('createProvider', () => {
  it('builds each provider from its spec form (no network at creation)', () => {
    const openai = createProvider('openai:gpt-4.1', { env: { OPENAI_API_KEY: 'sk-x' } });
    expect(openai).toBeInstanceOf(OpenAIProvider);
    expect(openai.id).toBe('openai:gpt-4.1');

    const anthropic = createProvider('anthropic:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: 'sk-ant-x' } });
    expect(anthropic).toBeInstanceOf(AnthropicProvider);
    expect(anthropic.id).toBe('anthropic:claude-sonnet-4-5');

    const scripted = createProvider('scripted:demo.json', { cwd: dir });
    expect(scripted).toBeInstanceOf(ScriptedProvider);
    expect(scripted.id).toBe('scripted:demo.json');
  });

  it('plays a scripted spec end to end', async () => {
    const scripted = createProvider(`scripted:${path.join(dir, 'demo.json')}`);
    expect(last(await collect(scripted.stream({ system: '', messages: [], tools: [] })))).toMatchObject({
      type: 'done',
      text: 'hello',
      stopReason: 'end_turn',
    });
  });

  it('the baseUrl option overrides OPENAI_BASE_URL', async () => {
    const server = await FakeServer.start();
    try {
      server.enqueue((_req, res) =>
        sse(res, [
          {
            data: {
              id: 'c',
              object: 'chat.completion.chunk',
              created: 1,
              model: 'm',
              choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }],
            },
          },
          { data: '[DONE]' },
        ]),
      );
      const p = createProvider('openai:m', {
        env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/never' },
        baseUrl: `${server.url}/v1`,
      });
      expect(
        last(await collect(p.stream({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }))),
      ).toMatchObject({ type: 'done', text: 'ok' });
      expect(server.requests[0]?.url).toBe('/v1/chat/completions');
    } finally {
      await server.close();
    }
  });

  it.each(['gpt-4.1', 'openai:', 'openai:  ', 'gemini:pro', '', ':x'])(
    'rejects the spec %j with the accepted forms',
    (spec) => {
      const err = thrown(() => createProvider(spec, { env: { OPENAI_API_KEY: 'k' } }));
      expect(err).toBeInstanceOf(ModelSpecError);
      expect(err).toBeInstanceOf(ProviderSetupError);
      const message = (err as Error).message;
      expect(message).toContain('openai:MODEL');
      expect(message).toContain('anthropic:MODEL');
      expect(message).toContain('scripted:PATH');
    },
  );

  it('names the variable to set when a key is missing or empty, and reads only the env it is given', () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-process');
    const openai = thrown(() => createProvider('openai:gpt-4.1', { env: {} }));
    expect(openai).toBeInstanceOf(MissingCredentialError);
    expect((openai as MissingCredentialError).variable).toBe('OPENAI_API_KEY');
    expect((openai as Error).message).toMatch(
      /^OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key> to use openai:MODEL/,
    );

    const anthropic = thrown(() => createProvider('anthropic:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: '  ' } }));
    expect(anthropic).toBeInstanceOf(MissingCredentialError);
    expect((anthropic as Error).message).toMatch(/^ANTHROPIC_API_KEY is not set/);
  });

  it('defaults to process.env', () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-process');
    expect(createProvider('anthropic:claude-test')).toBeInstanceOf(AnthropicProvider);
  });

  it('a missing or bad script is a setup error thrown at creation', () => {
    expect(thrown(() => createProvider('scripted:missing.json', { cwd: dir }))).toBeInstanceOf(ScriptError);
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ turns: [{ toolCalls: [{ input: {} }] }] }));
    const err = thrown(() => createProvider('scripted:bad.json', { cwd: dir }));
    expect(err).toBeInstanceOf(ScriptError);
    expect((err as Error).message).toContain('$.turns[0].toolCalls[0].name');
  });
});
