import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main, RECORDINGS_ENV, replayRecordings } from '../../../scripts/replay/replay';

/**
 * The replay script (npm run replay-recordings). Its own small recordings, written here, are the
 * part that always runs (CI has no recordings folder); the real recorded traffic is replayed when
 * the folder is there, and the test says it was skipped, and why, when it is not.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const REAL = process.env[RECORDINGS_ENV] ?? path.resolve(ROOT, '../shared/provider-recordings');

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  vi.restoreAllMocks();
});

const chat = (delta: object, finish: string | null = null) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
const chatUsage = (prompt: number, completion: number) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion },
  });
const sse = (...data: string[]) => data.map((d) => `data: ${d}\n\n`).join('');
const msg = (type: string, rest: object = {}) => JSON.stringify({ type, ...rest });

/** Our own recordings in the recordings folder's layout, one per behaviour the providers must get right. */
function ownRecordings(extraCases: object[] = []): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'own'));
  const files: Record<string, string> = {
    'own/text.sse': sse(
      chat({ content: 'Hi ' }),
      chat({ content: 'there' }),
      chat({}, 'stop'),
      chatUsage(7, 2),
      '[DONE]',
    ),
    'own/done-no-finish.sse': sse(
      chat({ tool_calls: [{ index: 0, id: 't1', function: { name: 'look', arguments: '{"at":' } }] }),
      chat({ tool_calls: [{ index: 0, function: { arguments: '"here"}' } }] }),
      chatUsage(9, 5),
      '[DONE]',
    ),
    'own/cut.sse': sse(chat({ content: 'half' })),
    'own/length-in-call.sse': sse(
      chat({ tool_calls: [{ index: 0, id: 't2', function: { name: 'save', arguments: '{"body":"lo' } }] }),
      chat({}, 'length'),
      chatUsage(3, 4),
      '[DONE]',
    ),
    'own/anthropic-cut-call.jsonl': [
      msg('message_start', { message: { usage: { input_tokens: 11, output_tokens: 1 } } }),
      msg('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'tu1', name: 'save', input: {} } }),
      msg('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"body": "a lo' } }),
      msg('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 8 } }),
      msg('message_stop'),
    ].join('\n'),
    'own/error-400.json': JSON.stringify({ error: { message: 'no such parameter', type: 'invalid_request_error' } }),
  };
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  const base = { tier: 'own', model: 'm' };
  const cases = [
    { ...base, id: 'text', provider: 'openai', file: 'own/text.sse', format: 'sse' },
    { ...base, id: 'done-no-finish', provider: 'openai', file: 'own/done-no-finish.sse', format: 'sse' },
    { ...base, id: 'cut', provider: 'openai', file: 'own/cut.sse', format: 'sse' },
    { ...base, id: 'length-in-call', provider: 'openai', file: 'own/length-in-call.sse', format: 'sse' },
    { ...base, id: 'anthropic-cut-call', provider: 'anthropic', file: 'own/anthropic-cut-call.jsonl', format: 'jsonl' },
    {
      ...base,
      id: 'error-400',
      provider: 'openai',
      file: 'own/error-400.json',
      format: 'json',
      status: 400,
      expect: { errorKind: 'bad_request' },
    },
    ...extraCases,
  ];
  writeFileSync(path.join(dir, 'cases.json'), JSON.stringify({ cases }));
  return dir;
}

describe('replay-recordings: our own recordings (always run)', () => {
  it('each behaviour parses as its recording says: one request each, a cut stream an error', async () => {
    const report = await replayRecordings(ownRecordings());
    const byId = Object.fromEntries(report.cases.map((c) => [c.id, c]));
    expect(report.cases.filter((c) => !c.ok)).toEqual([]);
    expect(report).toMatchObject({ total: 6, passed: 6, failed: 0 });
    expect(byId['done-no-finish']).toMatchObject({ requests: 1, got: { stopReason: 'tool_use', toolCalls: ['look'] } });
    expect(byId['cut']).toMatchObject({ requests: 1, got: { kind: 'error', errorKind: 'network' } });
    expect(byId['length-in-call']?.got).toMatchObject({ stopReason: 'max_tokens', toolCalls: ['save (cut off)'] });
    expect(byId['anthropic-cut-call']?.got).toMatchObject({ stopReason: 'max_tokens', toolCalls: ['save (cut off)'] });
    expect(byId['error-400']).toMatchObject({ requests: 1, got: { errorKind: 'bad_request' } });
  });

  it('a recording that does not parse as cases.json expects is a mismatch: named in the JSON, exit 1', async () => {
    const dir = ownRecordings([
      {
        id: 'wrong',
        tier: 'own',
        model: 'm',
        provider: 'openai',
        file: 'own/text.sse',
        format: 'sse',
        expect: { errorKind: 'auth' },
      },
    ]);
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => out.push(String(s)) > 0);
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => err.push(String(s)) > 0);
    expect(await main(['--dir', dir], '/nowhere')).toBe(1);
    const report = JSON.parse(out.join('')) as { failed: number; cases: Array<{ id: string; ok: boolean }> };
    expect(report.failed).toBe(1);
    expect(report.cases.find((c) => !c.ok)?.id).toBe('wrong');
    expect(err.join('')).toMatch(/6 of 7 recordings parse as expected; mismatched: wrong/);
  });

  it('no recordings folder: exit 2 and a message that says where it looked and how to point it elsewhere', async () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => err.push(String(s)) > 0);
    expect(await main([], '/nowhere/provider-recordings', {})).toBe(2);
    expect(err.join('')).toMatch(
      /no recordings at \/nowhere\/provider-recordings.*--dir or GATEHOUSE_PROVIDER_RECORDINGS/,
    );
  });
});

describe('replay-recordings: the real recorded traffic', () => {
  it('every recording parses as cases.json expects', async (ctx) => {
    if (!existsSync(path.join(REAL, 'cases.json'))) {
      // Asked for by name and missing is a failure; not configured is a visible skip, never a pass.
      if (process.env[RECORDINGS_ENV]) throw new Error(`${RECORDINGS_ENV}=${REAL} has no cases.json`);
      ctx.skip(`no recordings at ${REAL}; set ${RECORDINGS_ENV} to replay them`);
      return;
    }
    const report = await replayRecordings(REAL);
    expect(report.cases.filter((c) => !c.ok).map((c) => ({ id: c.id, mismatches: c.mismatches }))).toEqual([]);
    expect(report.total).toBeGreaterThanOrEqual(36);
  });
});
