import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { Mode } from '../policy/mode';
import { closeMatches } from '../problems/close-match';

/** The command line's value parsers: a bad value is a usage error (exit 2) that says what is accepted. */

/** A --repo value must name an existing directory; anything else is a usage error (exit 2). */
export function parseRepo(value: string): string {
  const dir = path.resolve(value);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InvalidArgumentError(`${dir} is not a directory`);
  return dir;
}

export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export function parseMode(value: string): Mode {
  const m = Mode.safeParse(value);
  if (!m.success) {
    const close = closeMatches(value, Mode.options);
    throw new InvalidArgumentError(
      `must be one of ${Mode.options.join(', ')}${close.length ? `; did you mean ${close[0]}?` : ''}`,
    );
  }
  return m.data;
}

export function parseOnAsk(value: string): 'pause' | 'deny' {
  if (value === 'pause' || value === 'deny') return value;
  throw new InvalidArgumentError('must be pause or deny');
}

export function parseScope(value: string): 'once' | 'run' {
  if (value === 'once' || value === 'run') return value;
  throw new InvalidArgumentError('must be once or run');
}

export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 86_400)
    throw new InvalidArgumentError('must be a number of seconds between 0 and 86400');
  return n;
}

/** A repeatable option: each use adds one value. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function parseBase(value: string): 'auto' | 'public' | 'local' {
  if (value === 'auto' || value === 'public' || value === 'local') return value;
  throw new InvalidArgumentError('must be auto, public or local');
}
