import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScriptError } from '../../src/providers/errors';
import { ScriptedProvider, loadScript, parseScript } from '../../src/providers/scripted';
import type { ModelRequest } from '../../src/providers/types';
import { collect } from './fake-server';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-scripted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function scriptFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'sys!',
  messages: [{ role: 'user', content: 'do it' }],
  tools: [],
  ...over,
});

describe('scripted provider', () => {
  it('plays a multi-turn script: text, several tool calls per turn, text-only, final', async () => {
    const file = scriptFile('demo.json', {
      turns: [
        {
          text: 'Reading two files.',
          toolCalls: [
            { name: 'read_file', input: { path: 'package.json' } },
            { name: 'read_file', input: { path: 'README.md' } },
          ],
        },
        { toolCalls: [{ name: 'git_status' }] },
        { text: 'Thinking out loud.' },
        { final: 'All done: the version is 1.0.0.' },
      ],
    });
    const model = new ScriptedProvider(loadScript(file), `scripted:${file}`);
    expect(model.turnsConsumed).toBe(0);

    const t1 = await collect(model.stream(request()));
    expect(t1).toEqual([
      { type: 'text_delta', text: 'Reading two files.' },
      { type: 'tool_call', call: { id: 'call_0_0', name: 'read_file', input: { path: 'package.json' } } },
      { type: 'tool_call', call: { id: 'call_0_1', name: 'read_file', input: { path: 'README.md' } } },
      {
        type: 'done',
        text: 'Reading two files.',
        toolCalls: [
          { id: 'call_0_0', name: 'read_file', input: { path: 'package.json' } },
          { id: 'call_0_1', name: 'read_file', input: { path: 'README.md' } },
        ],
        // input: 'sys!' + 'do it' = 9 chars -> 3; output: 18 + (9 + 23) + (9 + 20) = 79 chars -> 20
        usage: { inputTokens: 3, outputTokens: 20 },
        stopReason: 'tool_use',
      },
    ]);
    expect(model.turnsConsumed).toBe(1);

    const t2 = await collect(model.stream(request()));
    expect(t2).toEqual([
      { type: 'tool_call', call: { id: 'call_1_0', name: 'git_status', input: {} } },
      {
        type: 'done',
        text: '',
        toolCalls: [{ id: 'call_1_0', name: 'git_status', input: {} }],
        usage: { inputTokens: 3, outputTokens: 3 },
        stopReason: 'tool_use',
      },
    ]);

    const t3 = await collect(model.stream(request()));
    expect(t3.map((e) => e.type)).toEqual(['text_delta', 'done']);
    expect(t3[1]).toMatchObject({ text: 'Thinking out loud.', toolCalls: [], stopReason: 'end_turn' });

    const t4 = await collect(model.stream(request()));
    expect(t4).toEqual([
      { type: 'text_delta', text: 'All done: the version is 1.0.0.' },
      {
        type: 'done',
        text: 'All done: the version is 1.0.0.',
        toolCalls: [],
        usage: { inputTokens: 3, outputTokens: 8 },
        stopReason: 'end_turn',
      },
    ]);
    expect(model.turnsConsumed).toBe(4);
  });

  it('reports script_exhausted once no turns are left, without consuming anything', async () => {
    const model = new ScriptedProvider(parseScript({ turns: [{ final: 'only answer' }] }, 'inline'));
    await collect(model.stream(request()));
    const events = await collect(model.stream(request()));
    expect(events).toEqual([{ type: 'error', kind: 'script', message: 'script_exhausted', retryable: false }]);
    expect(model.turnsConsumed).toBe(1);
  });

  it('is deterministic: the same script and requests give the same events', async () => {
    const script = { turns: [{ text: 'a', toolCalls: [{ name: 'grep', input: { pattern: 'x' } }] }, { final: 'b' }] };
    const run = async () => {
      const model = new ScriptedProvider(parseScript(script, 'inline'));
      return [await collect(model.stream(request())), await collect(model.stream(request()))];
    };
    expect(await run()).toEqual(await run());
  });

  it('does not consume a turn when the request is already cancelled', async () => {
    const model = new ScriptedProvider(parseScript({ turns: [{ final: 'x' }] }, 'inline'));
    const controller = new AbortController();
    controller.abort();
    expect(await collect(model.stream(request({ signal: controller.signal })))).toMatchObject([
      { type: 'error', kind: 'cancelled' },
    ]);
    expect(model.turnsConsumed).toBe(0);
  });

  it('validates children (scripts of the same shape) and keeps them', () => {
    const script = loadScript(
      scriptFile('kids.json', {
        turns: [{ final: 'parent' }],
        children: [{ turns: [{ final: 'child' }], children: [] }],
      }),
    );
    expect(script.children?.[0]?.turns).toEqual([{ final: 'child' }]);
  });

  it('names the bad entry and its JSON path when the script is invalid', () => {
    const file = scriptFile('bad.json', {
      turns: [{ final: 'ok' }, { text: 'hi', toolCalls: [{ name: 42, input: {} }] }],
    });
    expect(() => loadScript(file)).toThrow(ScriptError);
    const message = errorOf(() => loadScript(file));
    expect(message).toContain(`Invalid model script ${file}`);
    expect(message).toContain('at $.turns[1].toolCalls[0].name:');
    expect(message).toContain('(entry: {"name":42,"input":{}})');
  });

  it('rejects typos, empty turns, final mixed with tool calls, and bad children, each with its path', () => {
    expect(errorOf(() => parseScript({ turns: [{ text: 'a', toolcalls: [] }] }, 's'))).toMatch(
      /at \$\.turns\[0\]: .*toolcalls/,
    );
    expect(errorOf(() => parseScript({ turns: [{}] }, 's'))).toMatch(
      /at \$\.turns\[0\]: a turn needs "text", "toolCalls" or "final"/,
    );
    expect(
      errorOf(() => parseScript({ turns: [{ final: 'x', toolCalls: [{ name: 'bash', input: {} }] }] }, 's')),
    ).toMatch(/at \$\.turns\[0\]: "final" is the whole answer/);
    expect(errorOf(() => parseScript({ turns: [], children: [{ turns: [{ final: 3 }] }] }, 's'))).toMatch(
      /at \$\.children\[0\]\.turns\[0\]\.final:/,
    );
    expect(errorOf(() => parseScript({ steps: [] }, 's'))).toMatch(/at \$\.turns:/);
    expect(errorOf(() => parseScript([], 's'))).toMatch(/at \$: /);
  });

  it('says when the file is missing or not JSON', () => {
    const missing = path.join(dir, 'nope.json');
    expect(() => loadScript(missing)).toThrow(ScriptError);
    expect(errorOf(() => loadScript(missing))).toBe(
      `Model script not found: ${missing}. Check the path in scripted:PATH (relative paths start at ${process.cwd()}).`,
    );
    expect(errorOf(() => loadScript('nope.json', dir))).toContain(`Model script not found: ${missing}`);
    const broken = scriptFile('broken.json', '{"turns": [');
    expect(errorOf(() => loadScript(broken))).toMatch(/is not valid JSON/);
  });
});

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('expected an error');
}
