import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { LogKey } from '../../src/events/key';
import { openRunRecord, sealRunRecord, type RunRecord } from '../../src/queue/run-record';
import { statusLines, type QueueStatus } from '../../src/queue/status';

const location = { keyFile: '/nonexistent/log.key', headsDir: os.tmpdir() };
const key = LogKey.fromBytes(randomBytes(32), location);
const record: RunRecord = {
  runId: 'run_rec123abc',
  state: 'paused',
  task: 'fix the test',
  snapshot: { name: 'run_rec123abc.tar', sha256: 'a'.repeat(64), bytes: 10 },
  pending: ['req_1'],
  attempts: 0,
  submittedAt: '2026-11-24T21:00:00.000Z',
  updatedAt: '2026-11-24T21:00:05.000Z',
};

describe("a run's record in the runs bucket", () => {
  it('reads back as written when sealed with the installation key', () => {
    expect(openRunRecord(key, record.runId, sealRunRecord(key, record))).toEqual({ record });
  });

  it('is not trusted when altered after sealing: a state, a snapshot, a field added', () => {
    const sealed = JSON.parse(sealRunRecord(key, record)) as Record<string, unknown>;
    for (const change of [
      { state: 'completed' },
      { snapshot: { ...record.snapshot, sha256: 'b'.repeat(64) } },
      { worker: 'wkr_someone' },
    ]) {
      const got = openRunRecord(key, record.runId, JSON.stringify({ ...sealed, ...change }));
      expect(got, JSON.stringify(change)).toEqual({ unverified: expect.stringMatching(/does not verify/) as unknown });
    }
  });

  it('is not trusted when forged: unsigned, sealed with another key, or a MAC made up', () => {
    const other = LogKey.fromBytes(randomBytes(32), location);
    expect(openRunRecord(key, record.runId, JSON.stringify(record))).toEqual({
      unverified: expect.stringMatching(/carries no MAC/) as unknown,
    });
    expect(openRunRecord(key, record.runId, sealRunRecord(other, record))).toEqual({
      unverified: expect.stringMatching(/does not verify/) as unknown,
    });
    expect(openRunRecord(key, record.runId, JSON.stringify({ ...record, mac: 'f'.repeat(64) }))).toEqual({
      unverified: expect.stringMatching(/does not verify/) as unknown,
    });
    expect(openRunRecord(key, record.runId, 'not json')).toEqual({ unverified: 'it is not JSON' });
  });

  it("is not trusted under another run's id (a genuine record copied over)", () => {
    expect(openRunRecord(key, 'run_other99999', sealRunRecord(key, record))).toEqual({
      unverified: expect.stringMatching(/record of run_rec123abc, not of run_other99999/) as unknown,
    });
  });

  it('is shown by status as not trusted, apart from the runs', () => {
    const s: QueueStatus = {
      queue: { pending: 0, taken: 0 },
      workers: [],
      leases: [],
      runs: [record],
      unverified: [{ runId: 'run_forged1234', problem: 'its MAC does not verify' }],
    };
    const lines = statusLines(s).join('\n');
    expect(lines).toMatch(/runs \(1\):\n {2}run_rec123abc paused/);
    expect(lines).toMatch(/do not verify \(1\).*\n {2}run_forged1234 NOT TRUSTED: its MAC does not verify/);
  });
});
