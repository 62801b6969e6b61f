import type { ErrorCode, FieldError } from './generated/hub-types.js';

export type { ErrorCode, FieldError };

/**
 * The one error the client throws for a refusal of the service, REST or hub alike: `code` is the
 * stable code of the service's closed list of error codes (the same on every transport), so callers branch on it.
 */
export class ConsultError extends Error {
  override readonly name = 'ConsultError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: {
      status?: number;
      errors?: FieldError[];
      retryAfter?: number;
      correlationId?: string;
      method?: string;
    } = {},
  ) {
    super(message);
  }
  get status(): number | undefined {
    return this.details.status;
  }
  get errors(): FieldError[] | undefined {
    return this.details.errors;
  }
  get retryAfter(): number | undefined {
    return this.details.retryAfter;
  }
}

/** Whether `e` is a ConsultError, optionally with one of the given codes. */
export function isConsultError(e: unknown, ...codes: ErrorCode[]): e is ConsultError {
  return e instanceof ConsultError && (codes.length === 0 || codes.includes(e.code));
}
