import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stderr, so stdout stays free for command output. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'chronoql' } }, pino.destination(2));
}
