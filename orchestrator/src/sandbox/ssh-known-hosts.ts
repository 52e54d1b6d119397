import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The host keys OpenSSH's known_hosts files hold for one host, so an `ssh://` Docker engine is
 * the one the operator meant: ssh2, which docker-modem uses, accepts any host key unless told
 * otherwise, and whoever answers in the engine's place would see every request (credentials in
 * container environments included) and answer them. Plain and hashed (`|1|salt|hash`) host
 * names are read, `[host]:port` for a port other than 22; wildcard patterns, negations and
 * `@cert-authority` lines are not (such a host is reported as unknown), and a key marked
 * `@revoked` is never accepted.
 */
export interface KnownHostKeys {
  /** The key blobs (the base64 field, decoded) accepted for the host. */
  accepted: Buffer[];
  revoked: Buffer[];
  /** The files read (those that exist), for messages. */
  files: string[];
}

/** GATEHOUSE_SSH_KNOWN_HOSTS (one file, `:`-separated for several), else ~/.ssh/known_hosts and the system's. */
export function knownHostsFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.GATEHOUSE_SSH_KNOWN_HOSTS) return env.GATEHOUSE_SSH_KNOWN_HOSTS.split(':').filter(Boolean);
  return [path.join(env.HOME || os.homedir(), '.ssh/known_hosts'), '/etc/ssh/ssh_known_hosts'];
}

export function knownHostKeys(host: string, port: number, files: string[]): KnownHostKeys {
  const name = port === 22 ? host : `[${host}]:${port}`;
  const out: KnownHostKeys = { accepted: [], revoked: [], files: [] };
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    out.files.push(file);
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const fields = line.split(/\s+/);
      const marker = fields[0]!.startsWith('@') ? fields.shift() : undefined;
      const [hosts, , blob] = fields;
      if (!hosts || !blob || marker === '@cert-authority') continue;
      if (!hosts.split(',').some((h) => hostMatches(h, name))) continue;
      const key = Buffer.from(blob, 'base64');
      (marker === '@revoked' ? out.revoked : out.accepted).push(key);
    }
  }
  return out;
}

function hostMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [salt, hash] = pattern.slice(3).split('|');
    if (!salt || !hash) return false;
    const got = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
    const want = Buffer.from(hash, 'base64');
    return got.length === want.length && timingSafeEqual(got, want);
  }
  return pattern === name;
}

/** ssh2's `hostVerifier`: the key the server showed is one of the accepted and none of the revoked. */
export function hostKeyVerifier(keys: KnownHostKeys): (key: Buffer) => boolean {
  return (key) => !keys.revoked.some((k) => k.equals(key)) && keys.accepted.some((k) => k.equals(key));
}
