import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, GENESIS_HASH, type Actor } from '@gatehouse/shared';
import { encodeCanonical } from '../../src/events/hash';
import { eventHash, Redactor, RunLog, sealEvent, verifyLog } from '../../src/events/index';
import { tempStateDir } from './helpers';

const SECRET = 'not-a-real-secret-value';
// Any code point (lone surrogates included), sometimes with a secret or a token shape inside.
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 5 }), fc.constantFrom(SECRET, `sk-${'x'.repeat(24)}`), fc.string({ maxLength: 5 }))
      .map((p) => p.join('')),
  },
);
const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const hash = fc.stringMatching(/^[0-9a-f]{64}$/);
const actor = fc.constantFrom<Actor>('model', 'policy', 'user', 'runtime', 'sandbox');
const json = fc.jsonValue({ maxDepth: 3 });

/** Valid appends of every event type, with arbitrary text and JSON where the schema allows it. */
const append = fc.oneof(
  fc.record({
    type: fc.constant('run.started'),
    data: fc.record({ task: text, mode: text, surface: fc.array(text, { maxLength: 3 }) }),
  }),
  fc.record({
    type: fc.constant('run.completed'),
    data: fc.record({
      status: fc.constantFrom('final', 'partial', 'failed', 'cancelled'),
      stopReason: text,
      answer: fc.option(text, { nil: undefined }),
    }),
  }),
  fc.record({ type: fc.constant('sandbox.lost'), data: fc.record({ sandboxId: id, reason: text }) }),
  fc.record({
    type: fc.constant('tool.intent'),
    data: fc.record({ callId: id, turn: fc.nat(), tool: text, input: json }),
  }),
  fc.record({
    type: fc.constant('tool.approval'),
    data: fc.record({
      callId: id,
      decision: fc.constantFrom('allow', 'ask', 'deny'),
      policyId: text,
      reason: text,
      actionHash: hash,
    }),
  }),
  fc.record({
    type: fc.constant('tool.execution.completed'),
    data: fc.record({
      callId: id,
      invocationId: text,
      status: fc.constantFrom('ok', 'failed', 'timeout', 'aborted', 'rejected', 'lost'),
      exitCode: fc.option(fc.integer({ min: -1, max: 255 }), { nil: null }),
      signal: fc.option(text, { nil: null }),
      durationMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
      bytes: fc.nat(),
      truncated: fc.boolean(),
      filesChanged: fc.array(text, { maxLength: 3 }),
      artifactRefs: fc.array(text, { maxLength: 2 }),
      fileHashes: fc.option(fc.dictionary(text, hash, { maxKeys: 2 }), { nil: undefined }),
    }),
  }),
  fc.record({
    type: fc.constant('tool.observation'),
    data: fc.record({
      callId: id,
      observationId: fc.nat().map((n) => `obs-${n}`),
      tool: text,
      outcome: fc.constantFrom('ok', 'failed', 'rejected', 'denied', 'pending'),
      content: text,
      truncated: fc.boolean(),
    }),
  }),
);
const step = fc.record({
  e: append,
  actor,
  causedByPrevious: fc.boolean(),
  ts: fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }),
});

interface Step {
  e: { type: string; data: unknown };
  actor: Actor;
  causedByPrevious: boolean;
  ts: Date;
}

function writeLog(steps: Step[], redactor?: Redactor): string {
  const state = tempStateDir();
  const log = RunLog.create(state, 'prop', redactor ? { redactor } : {});
  let prev: string | null = null;
  for (const s of steps) {
    const appendAny = log.append.bind(log) as (t: string, a: Actor, d: unknown, o: object) => { id: string };
    prev = appendAny(s.e.type, s.actor, s.e.data, { ts: s.ts, causationId: s.causedByPrevious ? prev : null }).id;
  }
  log.close();
  return path.join(state, 'runs', 'prop', 'events.jsonl');
}

describe('properties', () => {
  it('the fast canonical encoder and sealEvent agree with canonicalJson and eventHash on any JSON', () => {
    const anyJson = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }); // lone surrogates, "__proto__" keys, -0...
    fc.assert(
      fc.property(anyJson, text, actor, (data, s, a) => {
        expect(encodeCanonical(data, 0)).toBe(canonicalJson(data));
        const e = {
          id: s || 'x',
          runId: 'r',
          seq: 3,
          ts: '2025-01-01T00:00:00.000Z',
          type: s || 't',
          actor: a,
          causationId: s || null,
          parentRunId: null,
          data,
          prevHash: GENESIS_HASH,
        };
        const sealed = sealEvent(e);
        expect(sealed.hash).toBe(eventHash(e));
        expect(sealed.line).toBe(canonicalJson({ ...e, hash: sealed.hash }));
      }),
      { numRuns: 500 },
    );
    for (const bad of [NaN, Infinity, new Date(0), () => 1, 10n, Symbol('s')]) {
      expect(() => canonicalJson({ a: [bad] })).toThrow(TypeError);
      expect(() => encodeCanonical({ a: [bad] }, 0)).toThrow(TypeError);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeCanonical(cyclic, 0)).toThrow(/circular/);
    expect(encodeCanonical({ b: undefined, a: [undefined] }, 0)).toBe(canonicalJson({ b: undefined, a: [undefined] }));
  });

  it('any sequence of valid appends verifies, and reopens to the same events', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), fc.boolean(), (steps, withSecrets) => {
        const file = writeLog(steps, withSecrets ? Redactor.fromEnv({ API_KEY: SECRET }) : undefined);
        expect(verifyLog(file)).toMatchObject({ ok: true, events: steps.length });
        if (withSecrets) expect(readFileSync(file, 'utf8')).not.toContain(SECRET);
        const { log } = RunLog.open(path.dirname(path.dirname(path.dirname(file))), 'prop');
        expect(log.events().map((e) => e.type)).toEqual(steps.map((s) => s.e.type));
        log.close();
      }),
      { numRuns: 150 },
    );
  });

  /**
   * What can a single changed byte do? Every line is the canonical encoding of its event, so:
   * inside a line, it either breaks the JSON or the envelope, or changes a value (the hash no longer
   * recomputes, or the hash itself no longer matches), or keeps the value but not the canonical
   * spelling (`\u001f` vs `\u001F`, `1` vs `1.`...), which the canonical check catches; a newline
   * changed or added splits or merges lines. No single-byte change is a no-op, so all are detected.
   */
  it('every single-byte change anywhere in the file is detected', () => {
    const file = writeLog(
      fc.sample(step, { numRuns: 6, seed: 42 }).concat([
        {
          e: {
            type: 'tool.observation',
            data: {
              callId: 'c',
              observationId: 'obs-1',
              tool: 't',
              outcome: 'ok',
              content: 'ctl \u001f é 🎉',
              truncated: false,
            },
          },
          actor: 'runtime',
          causedByPrevious: true,
          ts: new Date(0),
        },
      ]),
    );
    const original = readFileSync(file);
    expect(original.toString('utf8')).toContain('\\u001f');
    const copy = path.join(path.dirname(file), 'copy.jsonl');
    const lineAt: number[] = [];
    for (let i = 0, line = 1; i < original.length; i++) {
      lineAt.push(line);
      if (original[i] === 0x0a) line++;
    }
    const check = (pos: number, xor: number): void => {
      const bytes = Buffer.from(original);
      bytes[pos] = bytes[pos]! ^ xor;
      writeFileSync(copy, bytes);
      const r = verifyLog(copy);
      if (r.ok || r.firstBad?.line !== lineAt[pos]) throw new Error(`byte ${pos} ^ ${xor}: ${JSON.stringify(r)}`);
    };
    // Exhaustively: every byte with a low-bit flip, an ASCII case flip and an inversion...
    for (let pos = 0; pos < original.length; pos++) for (const xor of [0x01, 0x20, 0xff]) check(pos, xor);
    // ...and random changes anywhere. The first bad line is always the changed byte's own line.
    fc.assert(
      fc.property(fc.nat({ max: original.length - 1 }), fc.integer({ min: 1, max: 255 }), (pos, xor) =>
        check(pos, xor),
      ),
      { numRuns: 3000 },
    );
  });

  it('flipping the case of a \\u escape (same value, other bytes) is caught by the canonical check', () => {
    const file = writeLog([
      {
        e: { type: 'sandbox.lost', data: { sandboxId: 'sb', reason: 'x\u001fy' } },
        actor: 'sandbox',
        causedByPrevious: false,
        ts: new Date(0),
      },
    ]);
    const edited = readFileSync(file, 'utf8').replace('\\u001f', '\\u001F');
    writeFileSync(file, edited);
    expect(verifyLog(file).firstBad).toMatchObject({
      line: 1,
      reason: expect.stringMatching(/not in canonical form/) as unknown,
    });
  });
});
