import { cpSync, readFileSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunLog, verifyLog } from '../../src/events/index';
import { appendSample, appendUnsynced, keyWithOwnHeads, tempStateDir, writeRun } from './helpers';

/**
 * A crash can only cut the log at some byte inside the write in flight, i.e. inside the last line.
 * For every such cut: nothing earlier is lost, the partial line is reported and removed, and the
 * chain continues cleanly after it.
 */
describe('torn last line', () => {
  it('recovers from a cut at every byte offset of the last line', () => {
    const state = tempStateDir();
    writeRun(state, 'orig', 9);
    appendUnsynced(state, 'orig', 9, 1);
    const origFile = path.join(state, 'runs', 'orig', 'events.jsonl');
    const bytes = readFileSync(origFile);
    const lastStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    const lastLen = bytes.length - lastStart; // including its newline
    expect(lastLen).toBeGreaterThan(100);
    const ninePrefix = bytes.subarray(0, lastStart);

    for (let cut = 0; cut < lastLen; cut++) {
      const runId = `cut-${cut}`;
      cpSync(path.join(state, 'runs', 'orig'), path.join(state, 'runs', runId), { recursive: true });
      const file = path.join(state, 'runs', runId, 'events.jsonl');
      truncateSync(file, lastStart + cut);

      // The copy carries the original runId inside its events, so open it under that id via a
      // state dir of its own.
      const own = tempStateDir();
      cpSync(path.join(state, 'runs', runId), path.join(own, 'runs', 'orig'), { recursive: true });
      const ownFile = path.join(own, 'runs', 'orig', 'events.jsonl');

      const before = verifyLog(ownFile);
      if (cut === 0) expect(before).toMatchObject({ ok: true, events: 9 });
      else
        expect(before.firstBad).toMatchObject({
          line: 10,
          reason: expect.stringMatching(/^torn last line/) as unknown,
        });

      const { log, recovered } = RunLog.open(own, 'orig', { key: keyWithOwnHeads() });
      if (cut === 0) expect(recovered).toBeUndefined();
      else
        expect(recovered).toEqual({ droppedBytes: cut, reason: expect.stringContaining('torn last line') as unknown });
      expect(log.events()).toHaveLength(9);
      expect(statSync(ownFile).size).toBe(lastStart);
      expect(readFileSync(ownFile).equals(ninePrefix)).toBe(true);

      appendSample(log, 9);
      appendSample(log, 10);
      log.close();
      expect(verifyLog(ownFile)).toMatchObject({ ok: true, events: 11 });
      expect(RunLog.readEvents(own, 'orig').map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }
  });

  it('treats a complete line missing only its newline as torn (the write did not finish)', () => {
    const state = tempStateDir();
    writeRun(state, 'r', 2);
    appendUnsynced(state, 'r', 2, 1);
    const file = path.join(state, 'runs', 'r', 'events.jsonl');
    truncateSync(file, statSync(file).size - 1);
    const { log, recovered } = RunLog.open(state, 'r');
    expect(recovered?.droppedBytes).toBeGreaterThan(100);
    expect(log.events()).toHaveLength(2);
    log.close();
  });

  it('readEvents ignores a torn tail without touching the file', () => {
    const state = tempStateDir();
    writeRun(state, 'r', 3);
    const file = path.join(state, 'runs', 'r', 'events.jsonl');
    truncateSync(file, statSync(file).size - 7);
    const size = statSync(file).size;
    expect(RunLog.readEvents(state, 'r')).toHaveLength(2);
    expect(statSync(file).size).toBe(size);
  });
});
