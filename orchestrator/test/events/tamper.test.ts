import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EventLogCorruptError,
  GENESIS_HASH,
  RunLog,
  sealEvent,
  verifyLog,
  type UnsealedEvent,
} from '../../src/events/index';
import { tempStateDir, writeRun } from './helpers';

const N = 20;

/** Lines of a pristine 20-event log, without their newlines. */
function pristine(): { state: string; lines: string[] } {
  const state = tempStateDir();
  writeRun(state, 'base', N);
  const text = readFileSync(path.join(state, 'runs', 'base', 'events.jsonl'), 'utf8');
  return { state, lines: text.slice(0, -1).split('\n') };
}

type Edit = (lines: string[], i: number) => string[];

/** Change one field of event i, keeping the line valid JSON of a valid envelope (JSON.stringify keeps key order). */
const field =
  (change: (e: Record<string, unknown>) => void): Edit =>
  (lines, i) => {
    const out = [...lines];
    const e = JSON.parse(out[i]!) as Record<string, unknown>;
    change(e);
    out[i] = JSON.stringify(e);
    return out;
  };

const otherActor = (a: unknown) => (a === 'model' ? 'user' : 'model');

/** [name, edit, 0-based index of the line that must be reported for an edit at event i (null: undetectable)] */
const cases: Array<[string, Edit, (i: number) => number | null, RegExp]> = [
  [
    'data value',
    field((e) => {
      const d = e.data as Record<string, unknown>;
      const k = Object.keys(d).find((key) => typeof d[key] === 'string')!;
      d[k] = `${String(d[k])}x`;
    }),
    (i) => i,
    /hash mismatch/,
  ],
  [
    'type',
    field((e) => void (e.type = e.type === 'tool.intent' ? 'tool.validation' : 'tool.intent')),
    (i) => i,
    /hash mismatch/,
  ],
  ['seq', field((e) => void (e.seq = (e.seq as number) + 100)), (i) => i, /seq is \d+, expected/],
  ['ts', field((e) => void (e.ts = '2030-01-01T00:00:00.000Z')), (i) => i, /hash mismatch/],
  ['actor', field((e) => void (e.actor = otherActor(e.actor))), (i) => i, /hash mismatch/],
  ['causationId', field((e) => void (e.causationId = 'evt-forged')), (i) => i, /hash mismatch/],
  ['hash', field((e) => void (e.hash = 'f'.repeat(64))), (i) => i, /hash mismatch/],
  // Deleting event i shifts event i+1 up into line i. Deleting the LAST event leaves a shorter but
  // valid chain: the chain alone cannot see a truncated tail (that needs an anchor elsewhere).
  [
    'delete a line',
    (lines, i) => lines.filter((_, j) => j !== i),
    (i) => (i === N - 1 ? null : i),
    /seq is \d+, expected \d+: event \d+ is missing/,
  ],
  // Swapping event i with its successor (the last with its predecessor) is caught at the first of the two lines.
  [
    'swap two lines',
    (lines, i) => {
      const [a, b] = i === N - 1 ? [i - 1, i] : [i, i + 1];
      const out = [...lines];
      [out[a], out[b]] = [out[b]!, out[a]!];
      return out;
    },
    (i) => (i === N - 1 ? i - 1 : i),
    /seq is \d+, expected \d+/,
  ],
  // A duplicate of event i appears right after it, at line i + 1.
  [
    'duplicate a line',
    (lines, i) => [...lines.slice(0, i + 1), lines[i]!, ...lines.slice(i + 1)],
    (i) => i + 1,
    /seq \d+ was already used/,
  ],
];

describe('tampering', () => {
  const { state, lines } = pristine();

  it('the pristine log verifies', () => {
    expect(verifyLog(path.join(state, 'runs', 'base', 'events.jsonl'))).toMatchObject({ ok: true, events: N });
  });

  describe.each(cases)('%s', (_name, edit, expectedIndex, reason) => {
    it.each(Array.from({ length: N }, (_, i) => i))(
      'at event %i is reported at the right line and refuses resume',
      (i) => {
        const dir = tempStateDir();
        const file = path.join(dir, 'runs', 'base', 'events.jsonl');
        const edited = edit(lines, i);
        RunLog.create(dir, 'base').close();
        writeFileSync(file, `${edited.join('\n')}\n`);

        const result = verifyLog(file);
        const at = expectedIndex(i);
        if (at === null) {
          expect(result).toMatchObject({ ok: true, events: N - 1 });
          return;
        }
        expect(result.ok).toBe(false);
        expect(result.events).toBe(at);
        expect(result.firstBad?.line).toBe(at + 1);
        expect(result.firstBad?.reason).toMatch(reason);
        const shown = JSON.parse(edited[at]!) as { seq: number; id: string };
        expect(result.firstBad?.seq).toBe(shown.seq);
        expect(result.firstBad?.id).toBe(shown.id);

        expect(() => RunLog.open(dir, 'base')).toThrow(EventLogCorruptError);
        expect(() => RunLog.open(dir, 'base')).toThrow(new RegExp(`line ${at + 1}\\b.*gatehouse verify base`));
        expect(readFileSync(file, 'utf8')).toBe(`${edited.join('\n')}\n`); // a refused open changes nothing
      },
    );
  });

  it('names the removed event when the prevHash link breaks but seq was renumbered', () => {
    const dir = tempStateDir();
    RunLog.create(dir, 'base').close();
    const file = path.join(dir, 'runs', 'base', 'events.jsonl');
    const edited = lines
      .filter((_, j) => j !== 5)
      .map((l, j) => (j >= 5 ? field((e) => void (e.seq = j))([l], 0)[0]! : l));
    writeFileSync(file, `${edited.join('\n')}\n`);
    expect(verifyLog(file).firstBad).toMatchObject({
      line: 6,
      reason: 'prevHash does not match event 4: an event was removed or reordered',
    });
  });

  it('flags a line re-serialized with whitespace even though its content hashes the same', () => {
    const dir = tempStateDir();
    RunLog.create(dir, 'base').close();
    const file = path.join(dir, 'runs', 'base', 'events.jsonl');
    const edited = [...lines];
    edited[3] = JSON.stringify(JSON.parse(edited[3]!), null, 1).replace(/\n/g, '');
    writeFileSync(file, `${edited.join('\n')}\n`);
    expect(verifyLog(file).firstBad).toMatchObject({
      line: 4,
      reason: expect.stringMatching(/not in canonical form/) as unknown,
    });
  });

  it.each([
    [
      'data that no longer fits its type',
      (d: Record<string, unknown>, e: Record<string, unknown>) =>
        void (e.type === 'tool.approval' ? (d.decision = 'maybe') : (d.callId = 42)),
      /data does not match the schema of tool\.\S+ \(/,
    ],
    [
      'an unknown event type',
      (_d: Record<string, unknown>, e: Record<string, unknown>) => void (e.type = 'tool.teleported'),
      /unknown event type "tool.teleported"/,
    ],
  ])('flags %s even when the forger recomputed the whole chain', (_name, forge, reason) => {
    const dir = tempStateDir();
    RunLog.create(dir, 'base').close();
    const file = path.join(dir, 'runs', 'base', 'events.jsonl');
    let prevHash = GENESIS_HASH;
    // An old-format (unkeyed) log: there, the schema check is what stands against a recomputed chain.
    const forged = lines.map((l, j) => {
      const { hash: _h, mac: _m, schemaVersion: _v, ...e } = JSON.parse(l) as Record<string, unknown>;
      if (j === 8) forge(e.data as Record<string, unknown>, e);
      const sealed = sealEvent({ ...(e as UnsealedEvent), prevHash });
      prevHash = sealed.hash;
      return sealed.line;
    });
    writeFileSync(file, `${forged.join('\n')}\n`);
    expect(verifyLog(file).firstBad).toMatchObject({
      line: 9,
      seq: 8,
      reason: expect.stringMatching(reason) as unknown,
    });
    expect(() => RunLog.open(dir, 'base')).toThrow(/line 9 \(seq 8\)/);
  });
});
