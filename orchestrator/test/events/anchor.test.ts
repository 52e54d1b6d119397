import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, GENESIS_HASH, sha256Hex } from '@gatehouse/shared';
import { RunLog, sealEvent, type UnsealedEvent } from '../../src/events/index';
import { auditRun } from '../../src/events/audit';
import { LogKey, LogKeyError } from '../../src/events/key';
import { appendSample, keyWithOwnHeads, tempStateDir, writeRun } from './helpers';

const N = 12;
const installation = (): LogKey => LogKey.load();
const logFile = (state: string, runId: string): string => path.join(state, 'runs', runId, 'events.jsonl');
const lines = (file: string): string[] => readFileSync(file, 'utf8').trimEnd().split('\n');
const writeLines = (file: string, ls: string[]): void => writeFileSync(file, `${ls.join('\n')}\n`);

/** A run that finished: N sample events and run.completed, closed (so its head is recorded). */
function finishedRun(state: string, runId: string, key?: LogKey): void {
  const log = RunLog.create(state, runId, key ? { key } : {});
  for (let i = 0; i < N; i++) appendSample(log, i);
  log.append('run.completed', 'runtime', { status: 'final', stopReason: 'final_answer' });
  log.close();
}

/** The forger's reseal: recompute every hash from canonical JSON, with or without the (unforgeable) MACs. */
function reseal(
  ls: string[],
  edit: (e: Record<string, unknown>, i: number) => void,
  keepMac: boolean | ((i: number) => boolean) = true,
): string[] {
  let prevHash = GENESIS_HASH;
  return ls.map((l, i) => {
    const { hash: _h, mac, ...e } = JSON.parse(l) as Record<string, unknown>;
    edit(e, i);
    e.prevHash = prevHash;
    prevHash = sha256Hex(canonicalJson(e));
    const keep = typeof keepMac === 'function' ? keepMac(i) : keepMac;
    return canonicalJson({ ...e, hash: prevHash, ...(keep && mac !== undefined ? { mac } : {}) });
  });
}

describe('an anchored log', () => {
  it('a finished run verifies intact: every MAC, the head, completion and its artifacts', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const r = auditRun(state, 'r', installation());
    expect(r.verdict).toBe('intact');
    expect(r.macs).toMatchObject({ verified: N + 1, unkeyed: 0, foreign: {} });
    expect(r.head).toMatchObject({ status: 'matched', events: N + 1, completedSeq: N, unsynced: 0 });
    expect(r.completion).toEqual({ seq: N, status: 'final' });
    expect(r.artifacts).toEqual({ checked: 2, full: 2, bad: [] });
  });

  it('a cut tail is detected and the run cannot be resumed', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    writeLines(logFile(state, 'r'), lines(logFile(state, 'r')).slice(0, -2));
    const r = auditRun(state, 'r', installation());
    expect(r.verdict).toBe('failed');
    expect(r.head.status).toBe('cut');
    expect(r.firstBad).toMatchObject({ line: N, seq: N - 1 });
    expect(r.problems[0]).toMatch(
      /cut tail: the run's head records 13 events, run.completed at seq 12; the log has 11/,
    );
    expect(() => RunLog.open(state, 'r')).toThrow(/cut tail/);
  });

  it('an edit with every later hash recomputed fails at the edited event', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const file = logFile(state, 'r');
    writeLines(
      file,
      reseal(lines(file), (e, i) => i === 7 && ((e.data as Record<string, unknown>).ok = false)),
    );
    const r = auditRun(state, 'r', installation());
    expect(r.verdict).toBe('failed');
    expect(r.firstBad).toMatchObject({
      line: 8,
      seq: 7,
      reason: expect.stringMatching(/keyed MAC does not verify/) as unknown,
    });
    expect(r.events).toBe(7);
    expect(() => RunLog.open(state, 'r')).toThrow(/line 8 \(seq 7\).*keyed MAC/);
  });

  it('stripping every MAC (a downgrade to the old format) is caught by the head recorded for the run id', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const file = logFile(state, 'r');
    writeLines(
      file,
      reseal(lines(file), (e) => delete e.schemaVersion, false),
    );
    const r = auditRun(state, 'r', installation());
    expect(r.verdict).toBe('failed');
    expect(r.problems.join('\n')).toMatch(
      /records run r with another first event: the log was rewritten from its start/,
    );
    expect(() => RunLog.open(state, 'r')).toThrow(/first event is not the one recorded for run r/);
  });

  it('an overwritten or deleted artifact is named, with the event that recorded it', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const dir = path.join(state, 'runs', 'r', 'artifacts');
    const [first, second] = readdirSync(dir).sort();
    writeFileSync(path.join(dir, first!), 'something else\n');
    writeFileSync(path.join(dir, second!), '');
    const r = auditRun(state, 'r', installation());
    expect(r.verdict).toBe('failed');
    expect(r.artifacts.bad.map((b) => b.ref).sort()).toEqual([first, second]);
    expect(r.artifacts.bad[0]!.reason).toMatch(
      /was changed: its SHA-256 is [0-9a-f]{64} \(\d+ bytes\), the event recorded/,
    );
    expect(r.firstBad?.reason).toMatch(/^artifact art-/);
  });

  it('a forged head is refused: edited to match a cut log, or replaced by another run’s head', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const headsDir = installation().location.headsDir;
    const headFile = path.join(
      headsDir,
      readdirSync(headsDir).find((f) => f.startsWith('r.'))!,
    );
    const head = JSON.parse(readFileSync(headFile, 'utf8')) as Record<string, unknown>;
    writeLines(logFile(state, 'r'), lines(logFile(state, 'r')).slice(0, 5));
    writeFileSync(headFile, JSON.stringify({ ...head, events: 5, completedSeq: null }));
    const r = auditRun(state, 'r', installation());
    expect(r.verdict).toBe('failed');
    expect(r.head.status).toBe('forged');
    expect(r.problems[0]).toMatch(/MAC does not verify/);
    expect(() => RunLog.open(state, 'r')).toThrow(/cannot be trusted/);
  });

  it('a log copied to another installation is unanchored there, not intact and not called forged', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const elsewhere = LogKey.fromBytes(randomBytes(32), { keyFile: '/nonexistent/log.key', headsDir: tempStateDir() });
    const r = auditRun(state, 'r', elsewhere);
    expect(r.verdict).toBe('unanchored');
    expect(r.macs.verified).toBe(0);
    expect(Object.values(r.macs.foreign)).toEqual([N + 1]);
    expect(r.unanchored.join('\n')).toMatch(
      /13 event\(s\) carry MACs of another installation's key \(id [0-9a-f]{16}\)/,
    );
    // An edit with recomputed hashes is still caught by the chain where the edit is not recomputed...
    // ...but where it is, this installation cannot tell: that is what "unanchored" says.
    expect(r.problems).toEqual([]);
  });

  it(
    'an old-format log (schemaVersion 1) stays readable, ' + 'says it is unanchored, and resumes into the new format',
    () => {
      const state = tempStateDir();
      RunLog.create(state, 'old').close();
      let prevHash = GENESIS_HASH;
      const old = Array.from({ length: 4 }, (_, seq) => {
        const e: UnsealedEvent = {
          id: `evt-old-${seq}`,
          runId: 'old',
          seq,
          ts: new Date(Date.UTC(2024, 0, 1, 0, 0, seq)).toISOString(),
          type: 'run.paused',
          actor: 'runtime',
          causationId: null,
          parentRunId: null,
          data: { pending: [], workspace: { dir: null, files: [], deleted: [] } },
          prevHash,
        };
        const sealed = sealEvent(e);
        prevHash = sealed.hash;
        return sealed.line;
      });
      expect(old[0]).not.toMatch(/schemaVersion|"mac"/);
      writeLines(logFile(state, 'old'), old);
      const r = auditRun(state, 'old', installation());
      expect(r.verdict).toBe('unanchored');
      expect(r.problems).toEqual([]);
      expect(r.unanchored.join('\n')).toMatch(/4 event\(s\) in the old format \(schemaVersion 1, no MAC\)/);

      const { log } = RunLog.open(state, 'old');
      log.append('run.resumed', 'user', { fromSeq: 3, workspaceFrom: 'repository', files: [] });
      log.append('run.completed', 'runtime', { status: 'final', stopReason: 'final_answer' });
      log.close();
      const after = auditRun(state, 'old', installation());
      expect(after.macs).toMatchObject({ verified: 2, unkeyed: 4 });
      expect(after.head.status).toBe('matched');
      expect(after.verdict).toBe('unanchored'); // the old prefix is still unkeyed

      // Once keyed, a later event without a MAC is a stripped one...
      const file = logFile(state, 'old');
      const keyed = lines(file);
      const strip = (at: number) =>
        reseal(
          keyed,
          (e, i) => i >= at && delete e.schemaVersion,
          (i) => i < at,
        );
      writeLines(file, strip(5));
      expect(auditRun(state, 'old', installation()).firstBad).toMatchObject({
        line: 6,
        seq: 5,
        reason: expect.stringMatching(/MAC was stripped/) as unknown,
      });
      // ...and stripping every keyed event leaves a log that disagrees with its head.
      writeLines(file, strip(4));
      const stripped = auditRun(state, 'old', installation());
      expect(stripped).toMatchObject({ verdict: 'failed', head: { status: 'rewritten' }, firstBad: { seq: 5 } });
    },
  );

  it('resume continues an anchored log: the head moves on, verify stays intact', () => {
    const state = tempStateDir();
    writeRun(state, 'r', 6);
    const { log } = RunLog.open(state, 'r');
    appendSample(log, 6);
    log.sync();
    appendSample(log, 7); // after the last sync: covered by its MAC only
    expect(auditRun(state, 'r', installation()).head).toMatchObject({ status: 'matched', events: 7, unsynced: 1 });
    log.close();
    expect(auditRun(state, 'r', installation())).toMatchObject({ verdict: 'intact', head: { events: 8, unsynced: 0 } });
  });

  it('the key never enters the state directory or the log', () => {
    const state = tempStateDir();
    finishedRun(state, 'r');
    const secret = readFileSync(process.env.GATEHOUSE_KEY_FILE!, 'utf8').trim();
    const files = readdirSync(state, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    expect(files.length).toBeGreaterThan(2);
    for (const f of files) expect(readFileSync(path.join(f.parentPath, f.name), 'utf8')).not.toContain(secret);
  });
});

describe('the installation key file', () => {
  const envFor = (keyFile: string) => ({ GATEHOUSE_KEY_FILE: keyFile });

  it('is created 0600 in a 0700 directory, once, and reused', () => {
    const file = path.join(tempStateDir(), 'cfg', 'gatehouse', 'log.key');
    const a = LogKey.load({ env: envFor(file) });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(a.location.headsDir).toBe(path.join(path.dirname(file), 'heads'));
    expect(LogKey.load({ env: envFor(file) }).id).toBe(a.id);
  });

  it('says what to do when the key cannot be created', () => {
    const dir = tempStateDir();
    writeFileSync(path.join(dir, 'not-a-dir'), '');
    expect(() => LogKey.load({ env: envFor(path.join(dir, 'not-a-dir', 'log.key')) })).toThrow(
      /cannot create the log key .*Set GATEHOUSE_KEY_FILE/,
    );
  });

  it('defaults to $XDG_CONFIG_HOME/gatehouse/log.key', () => {
    const xdg = tempStateDir();
    expect(LogKey.load({ env: { XDG_CONFIG_HOME: xdg } }).location.keyFile).toBe(
      path.join(xdg, 'gatehouse', 'log.key'),
    );
  });

  it(
    'is refused when others can read it, when it is a symlink, or when it sits in the state directory; each says ' +
      'how to fix it',
    () => {
      const dir = tempStateDir();
      const open = path.join(dir, 'open.key');
      writeFileSync(open, `${'ab'.repeat(32)}\n`);
      chmodSync(open, 0o644);
      expect(() => LogKey.load({ env: envFor(open) })).toThrow(LogKeyError);
      expect(() => LogKey.load({ env: envFor(open) })).toThrow(/mode 0644.*chmod 600/);

      const real = path.join(dir, 'real.key');
      writeFileSync(real, `${'cd'.repeat(32)}\n`, { mode: 0o600 });
      const link = path.join(dir, 'link.key');
      symlinkSync(real, link);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(() => LogKey.load({ env: envFor(link) })).toThrow(/is a symbolic link.*Replace the link/);

      const state = tempStateDir();
      mkdirSync(path.join(state, 'keys'));
      expect(() => RunLog.create(state, 'r', {})).not.toThrow();
      process.env.GATEHOUSE_KEY_FILE_SAVED = process.env.GATEHOUSE_KEY_FILE;
      try {
        process.env.GATEHOUSE_KEY_FILE = path.join(state, 'keys', 'log.key');
        expect(() => RunLog.create(state, 'r2')).toThrow(/inside the state directory.*GATEHOUSE_KEY_FILE/);
        expect(readdirSync(path.join(state, 'runs'))).toEqual(['r']); // nothing was created for r2
      } finally {
        process.env.GATEHOUSE_KEY_FILE = process.env.GATEHOUSE_KEY_FILE_SAVED;
        delete process.env.GATEHOUSE_KEY_FILE_SAVED;
      }
    },
  );

  it(
    'copies of one run continued apart are told apart only ' + 'with separate heads (one heads directory sees a fork)',
    () => {
      const state = tempStateDir();
      writeRun(state, 'r', 3);
      const { log } = RunLog.open(state, 'r', { key: keyWithOwnHeads() });
      appendSample(log, 3);
      log.close();
      expect(auditRun(state, 'r', installation()).head.status).toBe('matched');
    },
  );
});
