import { toAppError } from '../kernel/errors.js';
import type { Logger } from '../observability/logger.js';
import type { AckResult } from './hub.events.js';

/** A positive acknowledgement. */
export function ok<T>(data: T): AckResult<T> {
  return { ok: true, data };
}

/**
 * The one place hub errors become negative acks, with the same codes as REST problem documents.
 * Unknown errors become `internal` without their text, and are logged.
 */
export function fail(e: unknown, logger?: Logger, method?: string): AckResult<never> {
  const err = toAppError(e);
  if (err.code === 'internal' || err.status >= 500)
    logger?.error({ component: 'hub', method, err: e }, 'hub method failed');
  const message = err.code === 'internal' ? 'An unexpected error occurred' : err.message;
  return {
    ok: false,
    error: {
      code: err.code,
      message,
      ...(err.errors ? { errors: err.errors } : {}),
      ...(err.retryAfter ? { retryAfter: err.retryAfter } : {}),
    },
  };
}
