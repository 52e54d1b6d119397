import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * Ids appear inside NATS subjects, container names and file paths, so they are restricted to a
 * token-safe alphabet: no dots, wildcards, slashes or whitespace that could change a subject's
 * meaning or escape a directory.
 */
export const Id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 _ -');
export type Id = z.infer<typeof Id>;

export function newId(prefix: string): Id {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
}

/** A lowercase hex SHA-256, as canonical hashing produces it. */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');
