import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { replayRun } from '../../src/replay/replay-run';
import { sse } from '../providers/fake-server';
import { toolCallReply, useOpenAiServer } from './openai-wire-server';
import { recordRun } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-key-')), 'log.key');

/**
 * model mode against a real HTTP server on 127.0.0.1 speaking the Chat Completions wire format:
 * the provider is made from the spec as `gatehouse run` makes it (key and base URL from the
 * environment), the recorded observations reach the new model over the wire, and its usage is
 * recorded in the replay's log.
 */
const server = useOpenAiServer();
const call = (id: string, name: string, args: unknown) => toolCallReply(id, name, args, [1200, 30]);

describe('replay --mode model over the OpenAI wire format', () => {
  it('serves the recorded observation to the new model and stops where its call differs', async () => {
    const rec = await recordRun(
      {
        turns: [
          { toolCalls: [{ name: 'read_file', input: { path: 'greet.js' } }] },
          { toolCalls: [{ name: 'bash', input: { command: 'node greet.js' } }] },
          { final: 'It prints a greeting.' },
        ],
      },
      { 'greet.js': 'console.log("helo")\n' },
    );
    server().enqueue(
      (_req, res) => sse(res, call('call_abc', 'read_file', { path: 'greet.js' })),
      (_req, res) => sse(res, call('call_def', 'bash', { command: 'cat greet.js' })),
    );
    const r = await replayRun(rec.runId, { mode: 'model', stateDir: rec.stateDir, modelSpec: 'openai:gpt-test' });
    expect(r.outcome).toMatchObject({ verdict: 'diverged', compared: 2, differed: 1 });
    expect(server().requests).toHaveLength(2);
    // Turn 2 went out with the recorded read_file call and its recorded observation as the tool result.
    const body = server().requests[1]!.body as { model: string; messages: Array<Record<string, unknown>> };
    expect(body.model).toBe('gpt-test');
    const toolMsg = body.messages.find((m) => m.role === 'tool')!;
    expect(toolMsg.tool_call_id).toBe('call_0_0');
    expect(String(toolMsg.content)).toContain('[obs-1] read_file ok');
    expect(String(toolMsg.content)).toContain('console.log("helo")');

    const events = RunLog.readEvents(rec.stateDir, r.replayRunId);
    const div = events.find((e) => e.type === 'replay.divergence')!;
    expect(div.data).toMatchObject({
      turn: 2,
      recorded: { calls: [{ name: 'bash', input: { command: 'node greet.js' } }] },
      replayed: { calls: [{ callId: 'call_def', name: 'bash', input: { command: 'cat greet.js' } }] },
      reason: 'call 1 (bash): the input differs',
    });
    const outputs = events.filter((e) => e.type === 'model.output');
    expect(outputs.map((e) => e.data)).toMatchObject([
      { usage: { inputTokens: 1200, outputTokens: 30 } },
      { usage: { inputTokens: 1200, outputTokens: 30 } },
    ]);
    expect(events[0]!.data).toMatchObject({ model: 'openai:gpt-test', replay: { model: 'openai:gpt-test' } });
  });
});
