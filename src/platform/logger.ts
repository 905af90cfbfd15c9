import { pino, type Logger } from 'pino';

export type { Logger };

/** Credentials that may appear in logged requests or errors: never written out. */
const SECRETS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', '*.password', '*.apiKey', '*.token'];

/** Structured JSON logs on stderr (or `destination`), so stdout stays free for command output. */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino({ level, base: { service: 'chronoql' }, redact: { paths: SECRETS, censor: '[redacted]' } }, destination);
}
