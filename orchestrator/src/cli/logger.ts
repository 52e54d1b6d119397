import pino, { type Logger } from 'pino';

/** JSON logs on stderr (stdout belongs to command output); level from GATEHOUSE_LOG_LEVEL. */
export function createLogger(name = 'gatehouse'): Logger {
  return pino({ name, level: process.env.GATEHOUSE_LOG_LEVEL ?? 'warn' }, pino.destination(2));
}
