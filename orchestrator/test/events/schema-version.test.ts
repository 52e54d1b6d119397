import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, LOG_SCHEMA_VERSION, sha256Hex } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { auditRun } from '../../src/events/audit';
import { LogKey } from '../../src/events/key';
import { newerSchemaReason, schemaVersionOf } from '../../src/events/schema-version';
import { tempStateDir, writeRun } from './helpers';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: root,
    env: { ...process.env, GATEHOUSE_STATE_DIR: '' },
  });
const NOW = LOG_SCHEMA_VERSION;
const NEXT = LOG_SCHEMA_VERSION + 1;
const logFile = (state: string, runId: string): string => path.join(state, 'runs', runId, 'events.jsonl');

/**
 * What a gatehouse of the next version could append: a field this one's envelope does not know, an
 * event type it does not know, sealed and MACed with this installation's key like any event.
 */
function appendNewerEvent(state: string, runId: string, version: number): void {
  const file = logFile(state, runId);
  const last = JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!) as Record<string, unknown>;
  const seq = (last.seq as number) + 1;
  const e = {
    id: `evt-${runId}-${seq}`,
    runId,
    seq,
    ts: '2027-01-01T00:00:00.000Z',
    type: 'plan.proposed',
    actor: 'model',
    causationId: null,
    parentRunId: null,
    data: { steps: ['read', 'fix'] },
    prevHash: last.hash,
    schemaVersion: version,
    origin: 'a field of the newer envelope',
  };
  const hash = sha256Hex(canonicalJson(e));
  appendFileSync(file, `${canonicalJson({ ...e, hash, mac: LogKey.load().macEvent(hash) })}\n`);
}

describe("a log's schemaVersion", () => {
  it('is 1 when missing (logs from before keyed MACs), and what the event says otherwise', () => {
    expect(schemaVersionOf({ seq: 0 })).toBe(1);
    expect(schemaVersionOf({ schemaVersion: 2 })).toBe(2);
    expect(newerSchemaReason({ seq: 0 })).toBeUndefined();
    expect(newerSchemaReason({ schemaVersion: LOG_SCHEMA_VERSION })).toBeUndefined();
    expect(newerSchemaReason({ schemaVersion: LOG_SCHEMA_VERSION + 1 })).toMatch(
      new RegExp(
        `^schemaVersion ${LOG_SCHEMA_VERSION + 1} is newer than this gatehouse reads \\(1 to ${LOG_SCHEMA_VERSION}\\)` +
          `.*Use a gatehouse that reads log schemaVersion ${LOG_SCHEMA_VERSION + 1}`,
      ),
    );
    // Not a version at all: the envelope's schema rejects it as invalid, not as newer.
    expect(newerSchemaReason({ schemaVersion: '3' })).toBeUndefined();
  });

  it(
    'of a newer gatehouse is refused by verify, by reading (show) and by opening (resume), saying which version ' +
      'is needed',
    () => {
      const state = tempStateDir();
      writeRun(state, 'newer_run', 6);
      appendNewerEvent(state, 'newer_run', LOG_SCHEMA_VERSION + 1);
      const before = readFileSync(logFile(state, 'newer_run'));

      const r = auditRun(state, 'newer_run', LogKey.load());
      expect(r.verdict).toBe('failed');
      expect(r.events).toBe(6);
      expect(r.firstBad).toMatchObject({ line: 7, seq: 6 });
      // Newer, not "not a valid event envelope" (its unknown field) nor "unknown event type".
      expect(r.firstBad!.reason).toMatch(
        new RegExp(`^schemaVersion ${NEXT} is newer than this gatehouse reads \\(1 to ${NOW}\\)`),
      );

      const refusal = new RegExp(
        `run newer_run: event log .*, line 7: schemaVersion ${NEXT} is newer than this gatehouse reads`,
      );
      expect(() => RunLog.readEvents(state, 'newer_run')).toThrow(refusal);
      expect(() => RunLog.open(state, 'newer_run')).toThrow(refusal);
      expect(() => RunLog.open(state, 'newer_run')).not.toThrow(/corrupt/);
      // Refused, not repaired: nothing was cut off.
      expect(readFileSync(logFile(state, 'newer_run'))).toEqual(before);
    },
  );

  describe('through the CLI', () => {
    beforeAll(() => {
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
    });

    it('verify says the log is newer (not modified), and show refuses it with the version needed', () => {
      const state = tempStateDir();
      writeRun(state, 'newer_cli', 6);
      appendNewerEvent(state, 'newer_cli', LOG_SCHEMA_VERSION + 1);
      const v = gatehouse(['verify', 'newer_cli', '--state-dir', state]);
      expect(v.stdout).toContain(`schemaVersion ${NEXT} is newer than this gatehouse reads (1 to ${NOW})`);
      expect(v.stdout).toMatch(/meaning: from line 7 on, the log is in a newer format than this gatehouse reads/);
      expect(v.stdout).not.toContain('the log was modified after it was written');
      expect(v.status).toBe(1);

      const s = gatehouse(['show', 'newer_cli', '--state-dir', state]);
      expect(s.stderr).toContain(`Use a gatehouse that reads log schemaVersion ${NEXT} to verify, show or resume it`);
      expect(s.status).not.toBe(0);
    });
  });
});
