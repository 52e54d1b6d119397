import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeUrl } from '../../src/cli/queue-commands';
import { jobArgs } from '../../src/queue/job-args';
import { randomBytes } from 'node:crypto';
import { LogKey } from '../../src/events/key';
import { parseJob, sealJob, type Job } from '../../src/queue/job';

const snapshot = { name: 'run_abc123def.tar', sha256: 'a'.repeat(64), bytes: 10 };
const start: Job = {
  v: 1,
  kind: 'start',
  runId: 'run_abc123def',
  task: 'fix the test',
  snapshot,
  flags: { model: 'scripted:/x.json', script: '{"turns":[]}', policy: '{"mode":"sandboxed-auto"}', maxWall: 90_000 },
  submittedAt: '2026-11-24T21:00:00.000Z',
};
const key = LogKey.fromBytes(randomBytes(32), { keyFile: '/nonexistent/log.key', headsDir: os.tmpdir() });
const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

describe('a queue message', () => {
  it('is a job when it fits the schema', () => {
    expect(parseJob(bytes(sealJob(key, start)), key)).toEqual({ job: start });
  });

  it.each([
    ['not JSON', 'hello', /not a JSON job/],
    ['not UTF-8', new Uint8Array([0xff, 0xfe]), /not a JSON job/],
    ['an unknown kind', { ...start, kind: 'exec' }, /kind/],
    ['a run id that is no run id', { ...start, runId: 'run_../../etc' }, /runId/],
    ['a field it does not know', { ...start, flags: { ...start.flags, dockerHost: 'tcp://x' } }, /Unrecognized key/],
    ['a snapshot hash that is no hash', { ...start, snapshot: { ...snapshot, sha256: 'zz' } }, /sha256/],
  ])('is refused with the reason when it has %s', (_what, body, reason) => {
    const got = parseJob(body instanceof Uint8Array ? body : bytes(body), key);
    expect(got).toEqual({ problem: expect.stringMatching(reason) as unknown });
  });
});

describe("a job's command line on the worker", () => {
  const place = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-jobargs-'));
    return { repoDir: '/r', filesDir: path.join(dir, 'files'), stateDir: '/s', store: 'nats://127.0.0.1:4222' };
  };

  const value = (args: string[], flag: string) => args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);

  it('starts the run under its id, with the files it carries written beside it', async () => {
    const p = place();
    const args = await jobArgs(start, p, false);
    expect(args[0]).toBe('run');
    expect(args.slice(-2)).toEqual(['--', 'fix the test']);
    expect(value(args, '--run-id')).toBe('run_abc123def');
    const model = value(args, '--model')!;
    expect(model).toBe(`scripted:${path.join(p.filesDir, 'script.json')}`);
    expect(readFileSync(model.slice('scripted:'.length), 'utf8')).toBe('{"turns":[]}');
    expect(readFileSync(value(args, '--policy')!, 'utf8')).toBe('{"mode":"sandboxed-auto"}');
    expect(value(args, '--max-wall')).toBe('90000ms');
    expect(args).toEqual(expect.arrayContaining(['--store=nats://127.0.0.1:4222', '--json']));
  });

  it('keeps a task or value that looks like a flag a value (never an option of the child)', async () => {
    const job: Job = { ...start, task: '--apply', flags: { model: 'openai:m', image: '--apply', check: '-x' } };
    const args = await jobArgs(job, place(), false);
    expect(args.slice(-2)).toEqual(['--', '--apply']);
    expect(args.filter((a) => a === '--apply')).toEqual(['--apply']);
    expect(args).toContain('--image=--apply');
    expect(args).toContain('--check=-x');
  });

  it('continues a run the store already has events of, never starting it again', async () => {
    const args = await jobArgs(start, place(), true);
    expect(args[0]).toBe('resume');
    expect(args.slice(-2)).toEqual(['--', 'run_abc123def']);
    expect(args.some((a) => a.startsWith('--run-id'))).toBe(false);
  });
});

describe('the store URL', () => {
  it('comes from GATEHOUSE_STORE without the flag, and its absence says what to do', () => {
    expect(storeUrl(undefined, { GATEHOUSE_STORE: 'nats://h:1' }).servers).toEqual(['nats://h:1']);
    expect(() => storeUrl(undefined, {})).toThrow(/--store nats:\/\/HOST:PORT or set GATEHOUSE_STORE/);
    expect(() => storeUrl(undefined, { GATEHOUSE_STORE: 'redis://h' })).toThrow(/is not a NATS URL/);
  });
});
