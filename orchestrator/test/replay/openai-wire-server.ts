import { afterEach, beforeEach } from 'vitest';
import { FakeServer } from '../providers/fake-server';
import { DONE, role, toolArgs, toolStart, usageChunk } from '../providers/openai-harness';

/**
 * A fake Chat Completions server on 127.0.0.1 for each test of the file, with OPENAI_API_KEY and
 * OPENAI_BASE_URL pointing at it (and put back after), so a replay makes its provider from the spec
 * as `gatehouse run` does. Returns the current test's server.
 */
export function useOpenAiServer(): () => FakeServer {
  let server: FakeServer | undefined;
  const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
  beforeEach(async () => {
    server = await FakeServer.start();
    process.env.OPENAI_API_KEY = 'sk-local-test';
    process.env.OPENAI_BASE_URL = `${server.url}/v1`;
  });
  afterEach(async () => {
    await server?.close();
    for (const [k, v] of [
      ['OPENAI_API_KEY', saved.key],
      ['OPENAI_BASE_URL', saved.url],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  return () => server!;
}

/** The stream of a reply that calls one tool, with its usage. */
export const toolCallReply = (id: string, name: string, args: unknown, usage: [input: number, output: number]) => [
  role,
  toolStart(0, id, name),
  toolArgs(0, JSON.stringify(args)),
  {
    data: { ...(role.data as object), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }] },
  },
  usageChunk(...usage),
  DONE,
];
