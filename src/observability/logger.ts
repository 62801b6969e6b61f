import { pino, type Logger, type LoggerOptions } from 'pino';
import { currentContext } from './context.js';
import { activeTraceId } from './tracing.js';

export type { Logger };

/**
 * Structured JSON logger; every line carries the correlation id (the trace id when tracing is on) and
 * tenant of the running context.
 * Pass `level: 'silent'` in tests that do not read logs.
 */
export function createLogger(opts: { level?: string; nodeId?: string; stderr?: boolean } = {}): Logger {
  const options: LoggerOptions = {
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
      // Inside a span the correlation id is its trace id (decision 840), whatever the context says.
      const ctx = currentContext();
      const traceId = activeTraceId();
      if (!ctx) return traceId ? { correlationId: traceId } : {};
      return { correlationId: traceId ?? ctx.correlationId, tenant: ctx.tenant, userId: ctx.userId };
    },
  };
  // Command-line tools keep stdout for their answer.
  return opts.stderr ? pino(options, pino.destination(2)) : pino(options);
}
