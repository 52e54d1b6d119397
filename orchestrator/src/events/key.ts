import { createHash, createHmac, createPrivateKey, createPublicKey } from 'node:crypto';
import { randomBytes, sign, timingSafeEqual } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { realpathSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatehouseError } from '../errors';

/**
 * The installation's log key: 32 random bytes in a file OUTSIDE every state directory (default
 * `$XDG_CONFIG_HOME/gatehouse/log.key`, else `~/.config/gatehouse/log.key`; `GATEHOUSE_KEY_FILE`
 * overrides). It keys a MAC on every event and on each run's head, so someone who can rewrite a
 * state directory (a cut tail, an edit with the chain recomputed) cannot produce what verify checks.
 * The key itself is never written anywhere else: not into a log, not into a state directory.
 */

const KEY_HEX = /^[0-9a-f]{64}\n?$/;
/**
 * `<key id>:<HMAC-SHA256>`: the key id says which installation's key made it, so a log copied from
 * elsewhere is told apart from a forged one.
 */
export const EVENT_MAC = /^[0-9a-f]{16}:[0-9a-f]{64}$/;

export interface KeyLocation {
  keyFile: string;
  /** Where each run's head is recorded: beside the key unless GATEHOUSE_HEADS_DIR says otherwise. */
  headsDir: string;
}

type Env = Readonly<Record<string, string | undefined>>;

export function keyLocation(env: Env = process.env): KeyLocation {
  const configHome = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  const keyFile = path.resolve(env.GATEHOUSE_KEY_FILE || path.join(configHome, 'gatehouse', 'log.key'));
  const headsDir = path.resolve(env.GATEHOUSE_HEADS_DIR || path.join(path.dirname(keyFile), 'heads'));
  return { keyFile, headsDir };
}

/** The key cannot be used: the message says what is wrong and how to fix it. */
export class LogKeyError extends GatehouseError {
  readonly kind = 'environment';
  constructor(message: string) {
    super(message);
    this.name = 'LogKeyError';
  }
}

/** A path is inside a directory (both resolved through symlinks as far as they exist). */
function isInside(child: string, dir: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const rel = path.relative(real(dir), path.join(real(path.dirname(child)), path.basename(child)));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const DERIVE = {
  event: 'gatehouse event mac v1\n',
  head: 'gatehouse head mac v1\n',
  memory: 'gatehouse memory record mac v1\n',
  sign: 'gatehouse ed25519 seed v1',
  id: 'gatehouse key id v1',
};
/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export class LogKey {
  readonly id: string;
  readonly #secret: Buffer;
  #signer: KeyObject | undefined;

  private constructor(
    secret: Buffer,
    readonly location: KeyLocation,
  ) {
    this.#secret = secret;
    this.id = createHash('sha256').update(DERIVE.id).update(secret).digest('hex').slice(0, 16);
  }

  /** A key from raw bytes (tests, and another installation's key in a test of a copied log). */
  static fromBytes(secret: Buffer, location: KeyLocation): LogKey {
    if (secret.length !== 32) throw new LogKeyError('a log key is 32 bytes');
    return new LogKey(Buffer.from(secret), location);
  }

  /**
   * The installation's key, created (0600, in a 0700 directory) on first use. Refused when the
   * file is a symlink, not a regular file, not the user's own, readable or writable by others, or
   * inside the state directory (a key beside the log protects nothing).
   */
  static load(opts: { env?: Env; stateDir?: string; create?: boolean } = {}): LogKey {
    const location = keyLocation(opts.env);
    const { keyFile, headsDir } = location;
    const how = 'set GATEHOUSE_KEY_FILE to a file outside it (default ~/.config/gatehouse/log.key)';
    if (opts.stateDir !== undefined) {
      if (isInside(keyFile, opts.stateDir)) {
        throw new LogKeyError(
          `the log key ${keyFile} is inside the state directory ${opts.stateDir}: ` +
            `whoever can edit the logs could read it. Move it out and ${how}.`,
        );
      }
      if (isInside(headsDir, opts.stateDir)) {
        throw new LogKeyError(
          `the heads directory ${headsDir} is inside the state directory ${opts.stateDir}: a head kept beside ` +
            'the log anchors nothing. Set GATEHOUSE_HEADS_DIR (or GATEHOUSE_KEY_FILE) to a place outside it.',
        );
      }
    }
    const cached = loaded.get(keyFile);
    if (cached && cached.location.headsDir === headsDir) return cached;
    let key: LogKey;
    try {
      key = new LogKey(readKeyFile(keyFile), location);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || opts.create === false) throw e;
      try {
        createKeyFile(keyFile);
      } catch (err) {
        throw new LogKeyError(
          `cannot create the log key ${keyFile}: ${(err as Error).message}. ` +
            'Set GATEHOUSE_KEY_FILE to a writable place outside the state directory (its heads are kept beside it).',
        );
      }
      key = new LogKey(readKeyFile(keyFile), location);
    }
    loaded.set(keyFile, key);
    return key;
  }

  /** The MAC an event carries: over its chain hash, which commits to the event and everything before it. */
  macEvent(hash: string): string {
    return `${this.id}:${createHmac('sha256', this.#secret).update(DERIVE.event).update(hash).digest('hex')}`;
  }

  /** 'ok', 'bad' (this key, wrong MAC: forged or edited), or 'foreign' (made with another installation's key). */
  checkEventMac(hash: string, mac: string): 'ok' | 'bad' | 'foreign' {
    if (!mac.startsWith(`${this.id}:`)) return 'foreign';
    return equal(mac, this.macEvent(hash)) ? 'ok' : 'bad';
  }

  /** The MAC a memory record carries (memory/memory-store.ts): `<key id>:<HMAC>` over its canonical JSON. */
  macRecord(text: string): string {
    return `${this.id}:${createHmac('sha256', this.#secret).update(DERIVE.memory).update(text).digest('hex')}`;
  }

  /** 'ok', 'bad' (this key, wrong MAC: edited) or 'foreign' (another installation's key, or none). */
  checkRecordMac(text: string, mac: string): 'ok' | 'bad' | 'foreign' {
    if (!mac.startsWith(`${this.id}:`)) return 'foreign';
    return equal(mac, this.macRecord(text)) ? 'ok' : 'bad';
  }

  macHead(text: string): string {
    return createHmac('sha256', this.#secret).update(DERIVE.head).update(text).digest('hex');
  }

  checkHeadMac(text: string, mac: string): boolean {
    return equal(mac, this.macHead(text));
  }

  /** Ed25519 signing key derived from the secret: one key file, and a public key an auditor can hold. */
  #signingKey(): KeyObject {
    this.#signer ??= createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, createHmac('sha256', this.#secret).update(DERIVE.sign).digest()]),
      format: 'der',
      type: 'pkcs8',
    });
    return this.#signer;
  }

  /** The installation's public key (SPKI, base64 DER): publish it to auditors. */
  publicKey(): string {
    return createPublicKey(this.#signingKey()).export({ format: 'der', type: 'spki' }).toString('base64');
  }

  sign(text: string): string {
    return sign(null, Buffer.from(text, 'utf8'), this.#signingKey()).toString('base64');
  }
}

const loaded = new Map<string, LogKey>();

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function readKeyFile(file: string): Buffer {
  const st = lstatSync(file); // ENOENT propagates: the caller creates the key
  if (st.isSymbolicLink()) {
    throw new LogKeyError(
      `the log key ${file} is a symbolic link; gatehouse uses only a regular file of its own (a link can be ` +
        "swapped for someone else's key). Replace the link with the file it points to, " +
        'or set GATEHOUSE_KEY_FILE to that file.',
    );
  }
  if (!st.isFile()) {
    throw new LogKeyError(
      `the log key ${file} is not a regular file. ` +
        'Remove it (a new key is created on next use) or set GATEHOUSE_KEY_FILE to the key file.',
    );
  }
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new LogKeyError(
      `the log key ${file} belongs to uid ${st.uid}, not to you (uid ${process.getuid()}). ` +
        'Use your own key: set GATEHOUSE_KEY_FILE, or chown the file.',
    );
  }
  if ((st.mode & 0o077) !== 0) {
    throw new LogKeyError(
      `the log key ${file} is accessible to group or others (mode 0${(st.mode & 0o777).toString(8)}): ` +
        `anyone who can read it can forge a run's log. Run \`chmod 600 ${file}\` (and consider the key ` +
        'compromised if others could read it: move it away and let gatehouse make a new one; logs written ' +
        'with the old key then verify as unanchored).',
    );
  }
  const text = readFileSync(file, 'utf8');
  if (!KEY_HEX.test(text)) {
    throw new LogKeyError(
      `the log key ${file} is not a gatehouse key (64 hex digits). ` +
        'Point GATEHOUSE_KEY_FILE at the right file, or move this one away to have a new key made.',
    );
  }
  return Buffer.from(text.slice(0, 64), 'hex');
}

/**
 * Write a new key without ever exposing a partial one: a private temporary file, then link(2),
 * which fails if another process won the race (its key is then the one read back).
 */
function createKeyFile(file: string): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.log.key.${process.pid}.${randomBytes(6).toString('hex')}`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    rmSync(tmp, { force: true });
  }
}
