import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { LogKey } from '../../src/events/key';

const fixtures = path.join(fileURLToPath(new URL('../../..', import.meta.url)), 'test/fixtures/logs');

export type FixtureRuns = Record<string, { runId: string; exit: number; runs: string[] }>;

/**
 * One fixture folder (test/fixtures/logs/v<N>) for a version's own test: its runs.json, and a
 * private copy of the folder per call (the tests may write; the fixture never changes) with its
 * key made private as LogKey requires (git keeps no file modes). Copies are removed after the file.
 */
export function fixtureFolder(version: number): { runs: FixtureRuns; copy: () => { state: string; key: LogKey } } {
  const folder = path.join(fixtures, `v${version}`);
  const temps: string[] = [];
  afterAll(() => {
    for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    runs: JSON.parse(readFileSync(path.join(folder, 'runs.json'), 'utf8')) as FixtureRuns,
    copy: () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `gh-fixture-v${version}-`));
      temps.push(dir);
      cpSync(folder, dir, { recursive: true });
      const keyFile = path.join(dir, 'key', 'log.key');
      chmodSync(keyFile, 0o600);
      return { state: path.join(dir, 'state'), key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile } }) };
    },
  };
}
