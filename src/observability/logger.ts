import { pino, type Logger } from 'pino';
import { currentContext } from './context.js';

export type { Logger };

/**
 * Structured JSON logger; every line carries the correlation id and tenant of the running context.
 * Pass `level: 'silent'` in tests that do not read logs.
 */
export function createLogger(opts: { level?: string; nodeId?: string } = {}): Logger {
  return pino({
    level: opts.level ?? 'info',
    base: { node: opts.nodeId },
    messageKey: 'msg',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['req.headers.authorization', 'token', 'refreshToken', 'pin', 'password', '*.token', '*.pin'],
      censor: '[redacted]',
    },
    mixin() {
      const ctx = currentContext();
      return ctx ? { correlationId: ctx.correlationId, tenant: ctx.tenant, userId: ctx.userId } : {};
    },
  });
}
