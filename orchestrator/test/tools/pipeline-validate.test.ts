import { describe, expect, it } from 'vitest';
import { record } from '../../src/tools/pipeline/record';
import { argsHashOf } from '../../src/tools/recorded-values';
import { validate } from '../../src/tools/pipeline/validate';
import type { ToolCall } from '../../src/tools/pipeline/types';
import { harness, REJECTED, type Harness } from './pipeline-harness';

const FILES = { 'a.txt': 'one\ntwo\ntwo\n', 'src/app.ts': 'export const x = 1;\n' };

/** Phase 1 on its own: the intent is recorded first, as the pipeline does. */
async function validated(h: Harness, tool: string, input: unknown, extra: Partial<ToolCall> = {}) {
  const call: ToolCall = { callId: 'call_v', turn: 1, tool, input, ...extra };
  const intent = record(h.deps, 'tool.intent', 'model', { callId: call.callId, turn: 1, tool, input }, null);
  return validate(h.deps, call, tool, intent);
}

function validation(h: Harness) {
  return h.event<{ ok: boolean; stage: string; errors: Array<{ path: string; code: string }> }>(
    'tool.validation',
    'call_v',
  );
}

describe('validate phase: every check that fails is a rejection, recorded', () => {
  it.each([
    ['unknown tool', 'delete_everything', {}, 'known', 'unknown_tool', 'there is no tool named "delete_everything"'],
    ['tool off the surface', 'bash', { command: 'true' }, 'surface', 'tool_not_available', 'bash is not available'],
    ['schema: missing field', 'read_file', {}, 'schema', 'invalid_type', 'expected input: read_file {'],
    ['schema: unknown field', 'read_file', { path: 'a.txt', x: 1 }, 'schema', 'unrecognized_keys', 'invalid input'],
    ['path outside, as written', 'read_file', { path: '../etc/passwd' }, 'semantic', 'path_outside_workspace', ''],
    ['path outside, through a link', 'read_file', { path: 'out/passwd' }, 'semantic', 'path_outside_workspace', ''],
    [
      'edit before read',
      'edit_file',
      { path: 'a.txt', oldText: 'one', newText: '1' },
      'semantic',
      'must_read_first',
      'read_file it first',
    ],
  ])('%s: rejected at its stage, with the reason shown', async (_name, tool, input, stage, code, shown) => {
    const h = harness({ sandbox: { files: FILES, links: { out: '/etc' } }, surface: ['read_file', 'edit_file'] });
    const result = await validated(h, tool, input);
    expect(result.kind).toBe('rejected');
    if (result.kind !== 'rejected') return;
    expect(validation(h)).toMatchObject({ ok: false, stage, errors: [{ code }] });
    expect(h.types('call_v')).toEqual(REJECTED);
    expect(result.observation).toMatchObject({ callId: 'call_v', tool, outcome: 'rejected' });
    expect(result.observation.id).toMatch(/^obs-\d+$/);
    expect(result.observation.content).toContain(`${tool} was not run`);
    expect(result.observation.content).toContain(shown);
    // Nothing a tool would do reached the sandbox: only the runtime's own path check.
    expect(h.sandbox.executed()).toEqual([]);
  });

  it("a rejection's header hashes the call's proposed arguments (each rejected call its own)", async () => {
    const h = harness({ sandbox: { files: FILES }, surface: ['read_file'] });
    const one = await validated(h, 'read_file', { path: '../one' });
    const two = await validated(h, 'read_file', { path: '../two' });
    const hashOf = (r: typeof one) =>
      /args sha256:([0-9a-f]{12})/.exec(r.kind === 'rejected' ? r.observation.content : '')?.[1];
    expect(hashOf(one)).toBe(argsHashOf({ path: '../one' }).slice(0, 12));
    expect(hashOf(two)).toBe(argsHashOf({ path: '../two' }).slice(0, 12));
    expect(hashOf(one)).not.toBe(hashOf(two));
  });

  it('arguments that were not JSON: rejected at "schema" with the parse error', async () => {
    const h = harness({ sandbox: { files: FILES } });
    const result = await validated(h, 'read_file', '{"path": "a.t', { parseError: 'Unexpected end of JSON input' });
    expect(result.kind).toBe('rejected');
    expect(validation(h)).toMatchObject({ stage: 'schema', errors: [{ code: 'invalid_json' }] });
    expect(h.sandbox.calls).toEqual([]);
  });

  it('a call cut off at the output limit: rejected as "truncated" (before its bad JSON), never run', async () => {
    const h = harness({ sandbox: { files: FILES } });
    const result = await validated(h, 'write_file', '{"path": "a.txt", "content": "on', {
      truncated: true,
      parseError: 'cut off',
    });
    expect(result.kind).toBe('rejected');
    expect(validation(h)).toMatchObject({ ok: false, stage: 'schema', errors: [{ code: 'truncated' }] });
    if (result.kind === 'rejected') expect(result.observation.content).toMatch(/cut off at the output limit/);
    expect(h.sandbox.calls).toEqual([]);
  });

  it('a sandbox that cannot say where a path leads: rejected as "validation_unavailable", never guessed', async () => {
    const h = harness({ sandbox: { files: FILES } });
    h.sandbox.loseNext('resolve');
    const result = await validated(h, 'read_file', { path: 'a.txt' });
    expect(result.kind).toBe('rejected');
    expect(validation(h)).toMatchObject({ stage: 'semantic', errors: [{ code: 'validation_unavailable' }] });
  });

  it('a semantic check that throws (its peek lost): rejected as "validation_unavailable"', async () => {
    const h = harness({ sandbox: { files: FILES } });
    h.sandbox.loseNext('read_file', 'peek went nowhere');
    const result = await validated(h, 'write_file', { path: 'a.txt', content: 'x' });
    expect(result.kind).toBe('rejected');
    expect(validation(h)).toMatchObject({ stage: 'semantic', errors: [{ code: 'validation_unavailable' }] });
    expect(h.event<{ errors: Array<{ message: string }> }>('tool.validation', 'call_v').errors[0]!.message).toContain(
      'peek went nowhere',
    );
  });

  it('a valid call: one successful tool.validation with the parsed input and where its path leads', async () => {
    const h = harness({ sandbox: { files: FILES, links: { 'docs/a': '../a.txt' } } });
    const result = await validated(h, 'read_file', { path: 'docs/a' });
    expect(result.kind).toBe('valid');
    if (result.kind !== 'valid') return;
    expect(result.tool.name).toBe('read_file');
    expect(result.input).toEqual({ path: 'docs/a' });
    expect(result.resolved).toMatchObject([{ path: 'docs/a', key: 'docs/a', real: 'a.txt', exists: true }]);
    expect(result.ctx.realPath?.('docs/a')).toBe('a.txt');
    const event = h.eventsOf('call_v').at(-1)!;
    expect(event.type).toBe('tool.validation');
    expect(result.validationId).toBe(event.id);
    expect(event.data).toMatchObject({
      ok: true,
      stage: 'semantic',
      input: { path: 'docs/a' },
      resolved: [{ path: 'docs/a', real: 'a.txt' }],
    });
    expect(h.types('call_v')).toEqual(['tool.intent', 'tool.validation']);
  });
});
