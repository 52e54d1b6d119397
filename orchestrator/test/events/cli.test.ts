import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { LogKey } from '../../src/events/key';
import { appendUnsynced, tempStateDir, writeRun } from './helpers';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: root,
    env: { ...process.env, GATEHOUSE_STATE_DIR: '', ...env },
  });

/** `gatehouse verify` as a user runs it: the built bundle, in a child process. */
describe('gatehouse verify', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('exits 0 on an intact log', () => {
    const state = tempStateDir();
    writeRun(state, 'good_run', 8);
    const r = gatehouse(['verify', 'good_run', '--state-dir', state]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /^ok: run good_run: 8 events, hash chain intact \(last hash [0-9a-f]{64}\), anchored\nchecked:\n/,
    );
    // It says what it checked.
    expect(r.stdout).toContain('chain: intact, 8 events verified');
    expect(r.stdout).toMatch(/keyed MACs: 8 verified with this installation's key \(id [0-9a-f]{16}\)/);
    expect(r.stdout).toMatch(/head: matches: 8 events recorded at the last sync \(.*good_run\.[0-9a-f]{32}\.json\)/);
    expect(r.stdout).toContain('completion: no run.completed');
    expect(r.stdout).toContain('artifacts: 1 re-hashed and matching (1 against a full SHA-256');
    expect(r.status).toBe(0);
    const j = gatehouse(['verify', 'good_run', '--json'], { GATEHOUSE_STATE_DIR: state });
    expect(j.status).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ runId: 'good_run', ok: true, events: 8 });
  });

  it('exits 1 on a tampered log and names the first bad event', () => {
    const state = tempStateDir();
    writeRun(state, 'bad_run', 8);
    const file = path.join(state, 'runs', 'bad_run', 'events.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"case 6', '"case 7'));
    const r = gatehouse(['verify', 'bad_run', '--state-dir', state]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('FAILED: run bad_run: first bad event at line 7 (seq 6, id evt-bad_run-6)');
    expect(r.stdout).toContain('hash mismatch: the event was modified after it was written');
    expect(r.stdout).toContain('meaning: the log was modified after it was written');
    expect(r.stdout).toContain('6 events before it verified');
    const j = gatehouse(['verify', 'bad_run', '--state-dir', state, '--json']);
    expect(j.status).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      ok: false,
      events: 6,
      firstBad: { line: 7, seq: 6, id: 'evt-bad_run-6', reason: expect.stringMatching(/hash mismatch/) as unknown },
    });
  });

  it('exits 1 on a torn last line and says what it means', () => {
    const state = tempStateDir();
    writeRun(state, 'torn_run', 3);
    appendUnsynced(state, 'torn_run', 3, 1); // a torn write only ever hits events after the last sync
    const file = path.join(state, 'runs', 'torn_run', 'events.jsonl');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, -30));
    const r = gatehouse(['verify', 'torn_run', '--state-dir', state]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/line 4.*\n {2}torn last line/);
    expect(r.stdout).toContain('resuming the run cuts the partial line off');
  });

  it('exits 3 on a log another installation wrote (unanchored here), 2 on an unsafe key file', () => {
    const state = tempStateDir();
    writeRun(state, 'copied_run', 5);
    const other = path.join(tempStateDir(), 'other', 'log.key');
    LogKey.load({ env: { GATEHOUSE_KEY_FILE: other } }); // that other installation's key
    const r = gatehouse(['verify', 'copied_run', '--state-dir', state], { GATEHOUSE_KEY_FILE: other });
    expect(r.status, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toMatch(
      /^UNANCHORED: run copied_run: 5 events, hash chain intact, but nothing outside the log vouches for it:\n/,
    );
    expect(r.stdout).toMatch(/5 event\(s\) carry MACs of another installation's key/);
    expect(r.stdout).toContain('head: none recorded');
    chmodSync(other, 0o640);
    const unsafe = gatehouse(['verify', 'copied_run', '--state-dir', state], { GATEHOUSE_KEY_FILE: other });
    expect(unsafe.status).toBe(2);
    expect(unsafe.stderr).toContain(`chmod 600 ${other}`);
  });

  it('--export signs the head; an auditor without the key checks a log against it with --statement', () => {
    const state = tempStateDir();
    writeRun(state, 'audited', 8);
    const statement = path.join(state, 'statement.json');
    const exported = gatehouse(['verify', 'audited', '--state-dir', state, '--export', statement]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/wrote a statement signed by key [0-9a-f]{16}/);
    const s = JSON.parse(readFileSync(statement, 'utf8')) as { publicKey: string; events: number; signature: string };
    expect(s.events).toBe(8);
    expect(readFileSync(statement, 'utf8')).not.toContain(readFileSync(process.env.GATEHOUSE_KEY_FILE!, 'utf8').trim());

    // The auditor: no installation key at all, the published public key pinned.
    const auditor = { GATEHOUSE_KEY_FILE: path.join(tempStateDir(), 'none', 'log.key') };
    const ok = gatehouse(
      ['verify', 'audited', '--state-dir', state, '--statement', statement, '--public-key', s.publicKey],
      auditor,
    );
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(
      /^ok: run audited matches the statement .*, signed by key [0-9a-f]{16}\n {2}artifacts: 1 re-hashed/,
    );

    const other = LogKey.load({ env: { GATEHOUSE_KEY_FILE: path.join(tempStateDir(), 'k', 'log.key') } }).publicKey();
    const wrongKey = gatehouse(
      ['verify', 'audited', '--state-dir', state, '--statement', statement, '--public-key', other],
      auditor,
    );
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stdout).toMatch(/not by the key given with --public-key/);

    const forged = path.join(state, 'forged.json');
    writeFileSync(forged, JSON.stringify({ ...s, events: 5 }));
    expect(
      gatehouse(
        ['verify', 'audited', '--state-dir', state, '--statement', forged, '--public-key', s.publicKey],
        auditor,
      ).stdout,
    ).toMatch(/signature does not verify/);

    const file = path.join(state, 'runs', 'audited', 'events.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').split('\n').slice(0, 6).join('\n') + '\n');
    const cut = gatehouse(
      ['verify', 'audited', '--state-dir', state, '--statement', statement, '--public-key', s.publicKey],
      auditor,
    );
    expect(cut.status).toBe(1);
    expect(cut.stdout).toContain('cut tail: the statement records 8 events, the log has 6');
  });

  it('exits 2 for an unknown run and lists the runs that exist', () => {
    const state = tempStateDir();
    writeRun(state, 'run_a', 1);
    writeRun(state, 'run_b', 1);
    const r = gatehouse(['verify', 'nope', '--state-dir', state]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`unknown run "nope" in ${state}. Runs there: run_a, run_b.`);
    const empty = gatehouse(['verify', 'nope', '--state-dir', tempStateDir()]);
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('There are no runs there');
    const bad = gatehouse(['verify', '../etc', '--state-dir', state]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('invalid run id "../etc"');
    expect(gatehouse(['verify']).status).toBe(2); // missing argument: commander's usage error
  });
});
