import { destination, pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured logs go to stderr so stdout stays clean for `--json` output. Any field that could
 * hold a credential is redacted, whatever module logs it.
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      redact: {
        paths: [
          'apiKey',
          '*.apiKey',
          'apikey',
          '*.apikey',
          'password',
          '*.password',
          'headers["x-apikey"]',
          '*.headers["x-apikey"]',
          'headers.authorization',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination({ fd: 2, sync: false }),
  );
}
