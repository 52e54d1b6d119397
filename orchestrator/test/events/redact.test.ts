import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redactor, RunLog, verifyLog } from '../../src/events/index';
import { tempStateDir } from './helpers';

/** Obviously fake secrets, fresh per run so no fixture can leak a real one. */
const rand = (n: number, alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string =>
  Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join('');
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const env = {
  OPENAI_API_KEY: `sk-test-${rand(32)}`,
  ANTHROPIC_API_KEY: `sk-ant-test-${rand(32)}`,
  GITHUB_TOKEN: `ghp_${rand(36)}`,
  MY_SERVICE_PASSWORD: `hunter2-${rand(10)}`,
  DB_CREDENTIALS: `user:${rand(12)}`,
  DATABASE_URL: `postgres://app:${rand(12)}@db/app`,
  SHORT_TOKEN: 'abc123', // under 8 characters: not a credential, left alone
  HOME: '/home/someone-with-a-long-home',
  GIT_AUTHOR_NAME: 'Ada Lovelace Esq.',
};
// Shapes that appear without any variable holding them.
const shapes = {
  'openai-key': `sk-proj-${rand(40)}`,
  'github-token': `gho_${rand(36)}`,
  'aws-access-key': `AKIA${rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`,
  'nats-seed': `SU${rand(56, B32)}`,
  jwt: `eyJ${rand(20)}.${rand(30)}.${rand(25)}`,
  'private-key': `-----BEGIN OPENSSH PRIVATE KEY-----\n${rand(64)}\n${rand(64)}\n-----END OPENSSH PRIVATE KEY-----`,
};
const extra = `extra-literal-${rand(12)}`;
const secretValues = [
  ...Object.entries(env)
    .filter(([k]) => !['SHORT_TOKEN', 'HOME', 'GIT_AUTHOR_NAME'].includes(k))
    .map(([, v]) => v),
  ...Object.values(shapes),
  extra,
];

describe('Redactor', () => {
  const r = Redactor.fromEnv(env, [extra]);

  it('replaces environment secrets by variable name, wherever they appear in a string', () => {
    expect(r.redact(`Authorization: Bearer ${env.OPENAI_API_KEY}; done`)).toBe(
      'Authorization: Bearer [REDACTED:OPENAI_API_KEY]; done',
    );
    expect(r.redact(`${env.ANTHROPIC_API_KEY}`)).toBe('[REDACTED:ANTHROPIC_API_KEY]');
    expect(r.redact(`x${env.MY_SERVICE_PASSWORD}y${env.MY_SERVICE_PASSWORD}`)).toBe(
      'x[REDACTED:MY_SERVICE_PASSWORD]y[REDACTED:MY_SERVICE_PASSWORD]',
    );
    expect(r.redact(env.DATABASE_URL)).toBe('[REDACTED:DATABASE_URL]');
    expect(r.redact(`pass ${extra}.`)).toBe('pass [REDACTED:secret].');
  });

  it('replaces well-known token shapes by kind', () => {
    for (const [kind, value] of Object.entries(shapes))
      expect(r.redact(`before ${value} after`)).toBe(`before [REDACTED:${kind}] after`);
    expect(r.redact(`sk-ant-${rand(30)}`)).toBe('[REDACTED:anthropic-key]');
    expect(r.redact(`-----BEGIN RSA PRIVATE KEY-----\n${rand(40)}`)).toBe('[REDACTED:private-key]'); // cut-off key
  });

  it('leaves short values, non-secret names and ordinary text alone', () => {
    const text = `abc123 ${env.HOME} ${env.GIT_AUTHOR_NAME} sk-short ghp_short AKIA123 plain text`;
    expect(r.redact(text)).toBe(text);
    expect(r.literalCount).toBe(7);
  });

  it('treats regex metacharacters in secrets literally', () => {
    const weird = Redactor.fromEnv({ API_KEY: 'a.b*c+(d)[e]$^|\\' });
    expect(weird.redact('xa.b*c+(d)[e]$^|\\y aXb*c+(d)[e]$^|\\')).toBe('x[REDACTED:API_KEY]y aXb*c+(d)[e]$^|\\');
  });

  it('prefers the longest literal when one secret contains another', () => {
    const nested = Redactor.fromEnv({ A_TOKEN: 'abcdefgh', B_TOKEN: 'abcdefgh-ijkl' });
    expect(nested.redact('abcdefgh-ijkl abcdefgh')).toBe('[REDACTED:B_TOKEN] [REDACTED:A_TOKEN]');
  });

  it('walks JSON values, keys included, and returns the same reference when nothing changed', () => {
    const clean = { a: [1, 'two', { three: null }], b: true };
    expect(r.redactDeep(clean)).toBe(clean);
    const dirty = {
      list: ['ok', `k=${env.GITHUB_TOKEN}`],
      [env.OPENAI_API_KEY]: 1,
      [`${env.DB_CREDENTIALS}`]: 2,
      deep: { deeper: [{ v: shapes.jwt }] },
    };
    expect(r.redactDeep(dirty)).toEqual({
      list: ['ok', 'k=[REDACTED:GITHUB_TOKEN]'],
      '[REDACTED:OPENAI_API_KEY]': 1,
      '[REDACTED:DB_CREDENTIALS]': 2,
      deep: { deeper: [{ v: '[REDACTED:jwt]' }] },
    });
    // two keys that collapse to one marker are both kept
    const k2 = `sk-${rand(24)}`;
    const k3 = `sk-${rand(24)}`;
    expect(Redactor.patternsOnly().redactDeep({ [k2]: 1, [k3]: 2 })).toEqual({
      '[REDACTED:openai-key]': 1,
      '[REDACTED:openai-key]#2': 2,
    });
  });

  it('redacts bytes that are not UTF-8 without altering the rest', () => {
    const bin = Buffer.concat([
      Buffer.from([0xff, 0xfe, 0x00, 0x80]),
      Buffer.from(`é${env.GITHUB_TOKEN}ü`),
      Buffer.from([0xc3]),
    ]);
    const out = r.redactBytes(bin);
    expect(
      out.equals(
        Buffer.concat([
          Buffer.from([0xff, 0xfe, 0x00, 0x80]),
          Buffer.from('é[REDACTED:GITHUB_TOKEN]ü'),
          Buffer.from([0xc3]),
        ]),
      ),
    ).toBe(true);
    const uni = Redactor.fromEnv({ SECRET: 'pässwörd-ünïcode' });
    expect(uni.redactBytes(Buffer.from('x pässwörd-ünïcode y')).toString()).toBe('x [REDACTED:SECRET] y');
  });

  it('keeps every secret out of the bytes on disk: events (nested, keys, inside strings) and artifacts', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'secret-run', { redactor: Redactor.fromEnv(env, [extra]) });
    const all = secretValues.join(' and ');
    log.append('run.started', 'runtime', {
      task: `use ${env.OPENAI_API_KEY} to call the API`,
      mode: 'auto',
      surface: ['bash'],
    });
    log.append('tool.intent', 'model', {
      callId: 'c1',
      turn: 1,
      tool: 'bash',
      input: {
        command: `curl -H "x: ${env.GITHUB_TOKEN}" ${env.DATABASE_URL}`,
        env: { [env.MY_SERVICE_PASSWORD]: [all, { deeper: shapes['private-key'] }] },
      },
    });
    log.append('tool.observation', 'runtime', {
      callId: 'c1',
      observationId: 'obs-1',
      tool: 'bash',
      outcome: 'ok',
      content: `output: ${all}`,
      truncated: false,
    });
    const text = log.artifacts.put(`log line with ${all}\n`);
    const bytes = log.artifacts.put(Buffer.from(`binary\u0000${all}`));
    log.close();

    const runDir = path.join(state, 'runs', 'secret-run');
    const files = [
      path.join(runDir, 'events.jsonl'),
      ...readdirSync(path.join(runDir, 'artifacts')).map((f) => path.join(runDir, 'artifacts', f)),
    ];
    expect(files).toHaveLength(3);
    for (const f of files) {
      const raw = readFileSync(f, 'latin1');
      for (const s of secretValues) {
        expect(raw).not.toContain(Buffer.from(s).toString('latin1'));
        expect(raw).not.toContain(JSON.stringify(s).slice(1, -1)); // nor JSON-escaped (the private key has newlines)
      }
      expect(raw).toContain('[REDACTED:');
    }
    const events = readFileSync(files[0]!, 'utf8');
    for (const marker of [
      'OPENAI_API_KEY',
      'GITHUB_TOKEN',
      'DATABASE_URL',
      'MY_SERVICE_PASSWORD',
      'private-key',
      'nats-seed',
      'aws-access-key',
      'jwt',
      'secret',
    ]) {
      expect(events).toContain(`[REDACTED:${marker}]`);
    }
    expect(verifyLog(files[0]!).ok).toBe(true);
    // The ref names the redacted content: the artifact's hash is of what is on disk.
    expect(log.artifacts.read(text.ref).text).toContain('[REDACTED:ANTHROPIC_API_KEY]');
    expect(log.artifacts.read(bytes.ref).totalBytes).toBe(bytes.bytes);
  });

  it('refuses data whose secret sits in a field that a marker would make invalid', () => {
    const state = tempStateDir();
    const hashLike = 'ab'.repeat(32);
    const log = RunLog.create(state, 'r', { redactor: Redactor.fromEnv({ WEIRD_SECRET: hashLike }) });
    expect(() =>
      log.append('tool.approval', 'policy', {
        callId: 'c',
        decision: 'allow',
        policyId: 'p',
        reason: 'r',
        actionHash: hashLike,
      }),
    ).toThrow(/holds a secret in a field that cannot be redacted: actionHash/);
    expect(log.events()).toHaveLength(0);
    log.close();
  });
});
