/**
 * The daemon logs JSON lines to stderr (Docker keeps them as the container's log). It is bundled
 * into the image as one file, so it carries no logging library of its own.
 */
export function log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
}
