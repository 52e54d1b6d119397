import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { replayRun } from '../../src/replay/replay-run';
import { sse } from '../providers/fake-server';
import { DONE, role, usageChunk } from '../providers/openai-harness';
import { toolCallReply, useOpenAiServer } from './openai-wire-server';
import { recordRun } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-rt14-key-')), 'log.key');

/**
 * Red team (issue 14): the new model in `--mode model` is untrusted. Its call ids are ignored when
 * turns are compared, so an id no log field can hold (too long) must not turn a matching replay
 * into a failed one, nor a divergence into an internal error: the verdict stays truthful.
 * (A fake Chat Completions server on 127.0.0.1.)
 */
const server = useOpenAiServer();
const call = (id: string, name: string, args: unknown) => toolCallReply(id, name, args, [100, 10]);
const LONG_ID = `call_${'x'.repeat(300)}`;

async function recorded() {
  return recordRun(
    { turns: [{ toolCalls: [{ name: 'read_file', input: { path: 'a.txt' } }] }, { final: 'one (obs-1)' }] },
    { 'a.txt': 'one\n' },
  );
}

describe('red team 14: a new model whose call ids no log field holds', () => {
  it('the same call with a 305-character id is a matching turn, recorded', async () => {
    const rec = await recorded();
    server().enqueue((_req, res) => sse(res, call(LONG_ID, 'read_file', { path: 'a.txt' })));
    server().enqueue((_req, res) =>
      sse(res, [
        role,
        {
          data: {
            ...(role.data as object),
            choices: [{ index: 0, delta: { content: 'one' }, logprobs: null, finish_reason: 'stop' }],
          },
        },
        usageChunk(100, 1),
        DONE,
      ]),
    );
    const r = await replayRun(rec.runId, { mode: 'model', stateDir: rec.stateDir, modelSpec: 'openai:gpt-test' });
    expect(r.outcome).toMatchObject({ verdict: 'match', compared: 2 });
    const out = RunLog.readEvents(rec.stateDir, r.replayRunId).find((e) => e.type === 'model.output')!;
    expect(JSON.stringify(out.data)).toContain('read_file');
  });

  it('another call with a 305-character id is a divergence, recorded', async () => {
    const rec = await recorded();
    server().enqueue((_req, res) => sse(res, call(LONG_ID, 'bash', { command: 'rm -rf /' })));
    const r = await replayRun(rec.runId, { mode: 'model', stateDir: rec.stateDir, modelSpec: 'openai:gpt-test' });
    expect(r.outcome).toMatchObject({ verdict: 'diverged' });
    const div = RunLog.readEvents(rec.stateDir, r.replayRunId).find((e) => e.type === 'replay.divergence')!;
    expect(div.data).toMatchObject({ replayed: { calls: [{ name: 'bash', input: { command: 'rm -rf /' } }] } });
  });
});

describe("red team 14: a model server's error text", () => {
  // The CLI prints a replay's error as it is (cli/main.ts): a server's words must not carry control bytes.
  it('ends the replay with an error that shows escape sequences, never holds them', async () => {
    const rec = await recorded();
    const hostile = '\u001b]52;c;cm0gLXJmIH4K\u0007\u001b[2Kbad request';
    server().enqueue((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: hostile, type: 'invalid_request_error' } }));
    });
    const err = await replayRun(rec.runId, {
      mode: 'model',
      stateDir: rec.stateDir,
      modelSpec: 'openai:gpt-test',
    }).then(
      () => new Error('the replay did not fail'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/bad request/);
    expect(err.message).not.toContain('\u001b');
    expect(err.message).not.toContain('\u0007');
  });
});
