import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RunLog } from '../../src/events/index';
import { auditRun } from '../../src/events/audit';
import { LogKey } from '../../src/events/key';
import { LogSchemaTooNewError } from '../../src/events/log-errors';
import type * as Shared from '@gatehouse/shared';

/**
 * A gatehouse of the version before the newest (it reads 1 to N-1) given the newest fixture logs:
 * it must refuse them as needing a newer gatehouse (LogSchemaTooNewError), never call them modified,
 * and leave them as they are; and it still reads the older folders. The reader is this code with
 * LOG_SCHEMA_VERSION one lower: the version check runs before the data schemas (scan.ts), so that is
 * what decides, whatever event types the older reader knows.
 */
vi.mock('@gatehouse/shared', async (original) => {
  const shared = await original<typeof Shared>();
  return { ...shared, LOG_SCHEMA_VERSION: shared.LOG_SCHEMA_VERSION - 1 };
});
const { LOG_SCHEMA_VERSION: OLDER } = await import('@gatehouse/shared');
const NEWEST = OLDER + 1;

const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = path.join(root, 'test/fixtures/logs');

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});
function copy(version: number): { state: string; key: LogKey } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `gh-fixture-older-v${version}-`));
  temps.push(dir);
  cpSync(path.join(fixtures, `v${version}`), dir, { recursive: true });
  const keyFile = path.join(dir, 'key', 'log.key');
  chmodSync(keyFile, 0o600);
  return { state: path.join(dir, 'state'), key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile }, create: false }) };
}

describe(`a reader of log schema versions 1 to ${OLDER}`, () => {
  it(`refuses every run of the v${NEWEST} fixture as newer (LogSchemaTooNewError), not as modified`, () => {
    const f = copy(NEWEST);
    const all = readdirSync(path.join(f.state, 'runs'));
    expect(all.length).toBeGreaterThan(0);
    for (const runId of all) {
      const file = path.join(f.state, 'runs', runId, 'events.jsonl');
      const before = readFileSync(file);
      const newer = new RegExp(
        `^run ${runId}: event log .*, line 1: schemaVersion ${NEWEST} is newer than this gatehouse reads ` +
          `\\(1 to ${OLDER}\\).*Use a gatehouse that reads log schemaVersion ${NEWEST}`,
      );
      for (const read of [() => RunLog.readEvents(f.state, runId), () => RunLog.open(f.state, runId, { key: f.key })]) {
        let thrown: unknown;
        try {
          read();
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(LogSchemaTooNewError);
        expect((thrown as Error).message).toMatch(newer);
      }
      const audit = auditRun(f.state, runId, f.key);
      expect(audit.verdict).toBe('failed');
      expect(audit.firstBad).toMatchObject({ line: 1, seq: 0 });
      expect(audit.firstBad!.reason).toMatch(new RegExp(`^schemaVersion ${NEWEST} is newer than this gatehouse`));
      expect(readFileSync(file)).toEqual(before); // refused, not repaired
    }
  });

  it.each([1, 2].filter((v) => v <= OLDER))('still reads the v%i fixture', (version) => {
    const dir = path.join(fixtures, `v${version}`, 'state');
    for (const runId of readdirSync(path.join(dir, 'runs')))
      expect(RunLog.readEvents(dir, runId).length).toBeGreaterThan(0);
  });
});
