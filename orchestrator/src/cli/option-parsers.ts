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

/** Who an answer is given for: one line of printable text, recorded in the log. */
export function parseOnBehalfOf(value: string): string {
  const v = value.trim();
  if (v === '' || v.length > 200 || /[\u0000-\u001f\u007f-\u009f]/.test(v))
    throw new InvalidArgumentError('must be one line of 1 to 200 printable characters');
  return v;
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

/** `--max-cost USD`: a positive amount of US dollars (`2`, `0.50`, `$5`). */
export function parseUsd(value: string): number {
  const n = Number(value.trim().replace(/^\$/, ''));
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError('must be a positive amount of US dollars, such as 2 or 0.50');
  return n;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `--max-wall DURATION`: `90s`, `30m`, `2h`, `1h30m` (a unit is required), in milliseconds. */
export function parseDuration(value: string): number {
  const text = value.trim().toLowerCase();
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * DURATION_UNITS[unit!]!, 0);
  if (text === '' || parts.map((p) => p[0]).join('') !== text || !(ms >= 1000) || ms > 7 * 86_400_000)
    throw new InvalidArgumentError('must be a duration with a unit, such as 90s, 30m, 2h or 1h30m (1s to 7 days)');
  return Math.round(ms);
}
