/**
 * Secrets never enter the log or the artifacts. A Redactor knows two kinds of secret:
 *  - literal values (from the environment, or handed in: provider keys, NATS seeds, ...), replaced
 *    by `[REDACTED:<NAME>]`;
 *  - well-known token shapes, replaced wherever they appear, even if no variable holds them
 *    (a key the model printed, one in a repository's .env), by `[REDACTED:<kind>]`.
 * It runs on every append, so everything is folded into one regular expression, and strings with
 * nothing to hide (nearly all of them) cost one failed scan and no allocation.
 */

/** Variable names whose values are treated as secrets (when at least MIN_ENV_SECRET long). */
export const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|SEED|PRIVATE)/i;

/** Always secrets, whatever the name rule says (a database URL usually carries a password). */
export const EXPLICIT_SECRET_VARS = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'NPM_TOKEN',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'NATS_NKEY_SEED',
  'NATS_PASSWORD',
  'NATS_TOKEN',
  'DATABASE_URL',
] as const;

/**
 * Names the rule above matches that hold well-known, non-secret values. Without this list a CI
 * runner's GIT_AUTHOR_NAME would be blanked out of every event that mentions the author.
 */
const NOT_SECRET_VARS = new Set([
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'SSH_AUTH_SOCK',
  'XAUTHORITY',
]);

/** Shorter values are not credentials, and redacting them would shred ordinary text. */
export const MIN_ENV_SECRET = 8;
/** Literal secrets handed in explicitly may be shorter, but not trivially short. */
export const MIN_LITERAL_SECRET = 4;

/**
 * Token shapes, most specific first (an Anthropic key is also an OpenAI-shaped `sk-` string).
 * Every pattern is ASCII-only, so it matches the same bytes in a latin1 view of a UTF-8 buffer.
 */
const PATTERNS: ReadonlyArray<{ kind: string; source: string }> = [
  {
    kind: 'private-key',
    source:
      String.raw`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?` +
      String.raw`(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)`,
  },
  { kind: 'anthropic-key', source: String.raw`sk-ant-[A-Za-z0-9_-]{20,}` },
  { kind: 'openai-key', source: String.raw`sk-[A-Za-z0-9_-]{20,}` },
  { kind: 'github-token', source: String.raw`gh[pousr]_[A-Za-z0-9]{30,}` },
  { kind: 'aws-access-key', source: String.raw`AKIA[0-9A-Z]{16}` },
  { kind: 'nats-seed', source: String.raw`S[UAO][A-Z2-7]{56}` },
  { kind: 'jwt', source: String.raw`eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}` },
];
/** No pattern matches fewer characters than this (AKIA + 16). */
const MIN_PATTERN_LENGTH = 20;

export interface Secret {
  /** Shown in the marker: `[REDACTED:<name>]`. A variable name or a kind, never the value. */
  name: string;
  value: string;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const marker = (name: string): string => `[REDACTED:${name}]`;
const isPlainObject = (v: object): v is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** One compiled matcher: literals first (longest first, so a secret that contains another wins), then shapes. */
class Matcher {
  readonly test: RegExp;
  readonly replace: RegExp;
  readonly byValue: Map<string, string>;
  readonly minLength: number;

  constructor(literals: ReadonlyArray<Secret>) {
    this.byValue = new Map();
    for (const s of literals) if (!this.byValue.has(s.value)) this.byValue.set(s.value, s.name);
    const values = [...this.byValue.keys()].sort((a, b) => b.length - a.length);
    const alternatives = [
      values.length > 0 ? `(${values.map(escapeRegExp).join('|')})` : '((?!))',
      ...PATTERNS.map((p) => `(${p.source})`),
    ];
    const source = alternatives.join('|');
    this.test = new RegExp(source);
    this.replace = new RegExp(source, 'g');
    this.minLength = Math.min(MIN_PATTERN_LENGTH, ...values.map((v) => v.length));
  }

  run(text: string): string {
    if (text.length < this.minLength || !this.test.test(text)) return text;
    return text.replace(this.replace, (match: string, literal: string | undefined, ...groups: unknown[]) => {
      if (literal !== undefined) return marker(this.byValue.get(literal) ?? 'secret');
      for (let i = 0; i < PATTERNS.length; i++) if (groups[i] !== undefined) return marker(PATTERNS[i]!.kind);
      return marker('secret'); // unreachable: some group matched
    });
  }
}

export class Redactor {
  readonly #secrets: ReadonlyArray<Secret>;
  readonly #matcher: Matcher;
  #latin1: Matcher | undefined;

  /** `secrets` are literal values; the token shapes are always on. */
  constructor(secrets: ReadonlyArray<Secret> = []) {
    this.#secrets = secrets.filter((s) => s.value.length >= MIN_LITERAL_SECRET);
    this.#matcher = new Matcher(this.#secrets);
  }

  /**
   * Secrets from an environment: variables named like credentials (SECRET_NAME) or listed in
   * EXPLICIT_SECRET_VARS, with values of at least MIN_ENV_SECRET characters; plus `extra` literal
   * values (strings are named `secret`).
   */
  static fromEnv(
    env: Readonly<Record<string, string | undefined>>,
    extra: ReadonlyArray<string | Secret> = [],
  ): Redactor {
    const explicit = new Set<string>(EXPLICIT_SECRET_VARS);
    const secrets: Secret[] = [];
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined || value.length < MIN_ENV_SECRET) continue;
      if (explicit.has(name) || (SECRET_NAME.test(name) && !NOT_SECRET_VARS.has(name))) secrets.push({ name, value });
    }
    for (const e of extra) secrets.push(typeof e === 'string' ? { name: 'secret', value: e } : e);
    return new Redactor(secrets);
  }

  /** Token shapes only: for tests and tools that have no environment to protect. */
  static patternsOnly(): Redactor {
    return new Redactor([]);
  }

  /** How many literal secrets it knows (values are never exposed). */
  get literalCount(): number {
    return this.#secrets.length;
  }

  /** A new Redactor that also knows `more` (e.g. a sandbox's credentials minted mid-run). */
  with(more: ReadonlyArray<Secret>): Redactor {
    return new Redactor([...this.#secrets, ...more]);
  }

  redact(text: string): string {
    return this.#matcher.run(text);
  }

  /**
   * Redact every string and every object key in a JSON value. Returns the same reference when
   * nothing changed (callers use that to skip re-validation). Values that are not JSON (class
   * instances) are returned untouched; canonical JSON refuses them anyway.
   */
  redactDeep<T>(value: T): T {
    return this.#deep(value) as T;
  }

  #deep(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const r = this.#deep(v);
        if (r !== v && out === undefined) out = value.slice(0, i);
        if (out !== undefined) out.push(r);
      }
      return out ?? value;
    }
    if (!isPlainObject(value)) return value;
    let changed = false;
    const entries: Array<[string, unknown]> = [];
    for (const [k, v] of Object.entries(value)) {
      const rk = this.redact(k);
      const rv = this.#deep(v);
      if (rk !== k || rv !== v) changed = true;
      entries.push([rk, rv]);
    }
    if (!changed) return value;
    // Two keys that redact to the same marker must not silently overwrite each other.
    const seen = new Map<string, number>();
    for (const e of entries) {
      const n = seen.get(e[0]) ?? 0;
      seen.set(e[0], n + 1);
      if (n > 0) e[0] = `${e[0]}#${n + 1}`;
    }
    // fromEntries defines own properties, so a "__proto__" key stays data, not a prototype.
    return Object.fromEntries(entries);
  }

  /**
   * Redact bytes that may not be UTF-8 (command output, binary files). Works on the latin1 view
   * (one char per byte, lossless): the token shapes are ASCII and literal secrets are matched by
   * their UTF-8 bytes, so text and binary are redacted alike and nothing else is altered.
   */
  redactBytes(bytes: Uint8Array): Buffer {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#latin1 ??= new Matcher(
      this.#secrets.map((s) => ({ name: s.name, value: Buffer.from(s.value, 'utf8').toString('latin1') })),
    );
    const view = buf.toString('latin1');
    const out = this.#latin1.run(view);
    return out === view ? buf : Buffer.from(out, 'latin1');
  }
}
