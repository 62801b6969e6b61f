/**
 * Every error the service reports, by stable code. REST problem responses, GraphQL
 * `extensions.code` and hub negative acks all use these codes, so clients branch on one list.
 * Add a code here (with its HTTP status) rather than inventing one at a throw site.
 *
 * `retry` says what repeating the same operation can do, in one place for every caller:
 * - 'again': transient (the actor moved, a dependency is down or slow); actor asks re-route and retry.
 * - 'never': permanent (the thing is gone, the input or the state is wrong); a job fails at once
 *   instead of burning its attempts.
 * - absent: no general answer; jobs retry with their back-off, asks give up.
 */
export const ERROR_CODES = {
  bad_request: { status: 400, title: 'Bad request' },
  validation_failed: { status: 400, title: 'Validation failed', retry: 'never' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  logout_token_invalid: { status: 400, title: 'Logout token invalid' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  token_invalid: { status: 401, title: 'Token invalid' },
  token_expired: { status: 401, title: 'Token expired' },
  session_revoked: { status: 401, title: 'Session revoked' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  forbidden: { status: 403, title: 'Forbidden', retry: 'never' },
  permission_denied: { status: 403, title: 'Permission denied' },
  wrong_tenant: { status: 403, title: 'Token belongs to another tenant' },
  account_locked: { status: 423, title: 'Account locked' },
  not_found: { status: 404, title: 'Not found', retry: 'never' },
  route_not_found: { status: 404, title: 'Route not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  tenant_not_found: { status: 404, title: 'Tenant not found', retry: 'never' },
  user_not_found: { status: 404, title: 'User not found', retry: 'never' },
  contact_not_found: { status: 404, title: 'Contact not found' },
  group_not_found: { status: 404, title: 'Group not found' },
  event_not_found: { status: 404, title: 'Event not found', retry: 'never' },
  meeting_not_found: { status: 404, title: 'Meeting not found' },
  waiting_entry_not_found: { status: 404, title: 'Not in the waiting room', retry: 'never' },
  not_meeting_host: { status: 403, title: 'Only a host of the meeting may do this', retry: 'never' },
  meeting_access_denied: {
    status: 403,
    title: 'Denied or removed from this meeting: a host must admit you again',
    retry: 'never',
  },
  meeting_locked: { status: 423, title: 'The meeting is locked', retry: 'never' },
  participant_not_found: { status: 404, title: 'Not in the meeting', retry: 'never' },
  host_request_not_found: { status: 404, title: 'No pending request for host access', retry: 'never' },
  host_not_eligible: { status: 409, title: 'This user may not host meetings', retry: 'never' },
  consent_request_not_found: { status: 404, title: 'No such recording consent request', retry: 'never' },
  consent_not_required: { status: 409, title: 'Your consent is not asked for this recording', retry: 'never' },
  consent_already_given: { status: 409, title: 'You already answered this consent request', retry: 'never' },
  recording_consent_required: {
    status: 409,
    title: 'Recording needs the consent of those present: start it from the meeting',
    retry: 'never',
  },
  call_not_found: { status: 404, title: 'Call not found' },
  notice_not_found: { status: 404, title: 'Notice not found' },
  device_not_found: { status: 404, title: 'Device not found' },
  peripheral_type_not_found: { status: 404, title: 'Peripheral type not found' },
  file_not_found: { status: 404, title: 'File not found', retry: 'never' },
  login_code_not_found: { status: 404, title: 'Login code not found' },
  login_code_expired: { status: 410, title: 'Login code expired' },
  login_code_used: { status: 409, title: 'Login code already used' },
  login_code_pending: { status: 409, title: 'Login code not approved yet' },
  login_code_refused: { status: 403, title: 'Login code refused', retry: 'never' },
  conflict: { status: 409, title: 'Conflict' },
  invalid_state: { status: 409, title: 'Invalid state transition', retry: 'never' },
  tenant_exists: { status: 409, title: 'Tenant already exists' },
  url_not_allowed: { status: 400, title: 'URL not allowed' },
  webhook_subscription_not_found: { status: 404, title: 'Webhook subscription not found', retry: 'never' },
  webhook_cursor_expired: { status: 410, title: 'Cursor older than the event retention' },
  query_too_complex: { status: 400, title: 'Query too complex' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  file_type_not_allowed: { status: 415, title: 'File type not allowed' },
  file_content_mismatch: { status: 415, title: 'File content does not match its extension' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable' },
  thumbnail_not_ready: { status: 409, title: 'Thumbnail not ready yet' },
  import_not_found: { status: 404, title: 'Import not found', retry: 'never' },
  spreadsheet_rejected: { status: 422, title: 'Spreadsheet rejected', retry: 'never' },
  pin_policy_violation: { status: 422, title: 'PIN does not meet the tenant policy' },
  password_policy_violation: { status: 422, title: 'Password does not meet the policy' },
  setup_link_invalid: { status: 410, title: 'Set-password link unknown, used, replaced or expired' },
  pending_user_not_found: { status: 404, title: 'Pending user not found' },
  rate_limited: { status: 429, title: 'Too many requests' },
  resync_required: {
    status: 409,
    title: 'Missed pushes are no longer recoverable: resynchronise',
    retry: 'never',
  },
  not_owner: { status: 503, title: 'Actor is owned by another node', retry: 'again' },
  audit_chain_broken: { status: 409, title: 'Audit chain broken', retry: 'never' },
  audit_busy: { status: 503, title: 'Audit trail busy', retry: 'again' },
  service_unavailable: { status: 503, title: 'Service temporarily unavailable', retry: 'again' },
  timeout: { status: 504, title: 'Timed out', retry: 'again' },
  internal: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: number; title: string; retry?: 'again' | 'never' }>;

export type ErrorCode = keyof typeof ERROR_CODES;
/** The codes whose operation may succeed when repeated (`retry: 'again'`): clients retry these. */
export type RetryableCode = {
  [K in ErrorCode]: (typeof ERROR_CODES)[K] extends { retry: 'again' } ? K : never;
}[ErrorCode];

export interface FieldError {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  /** Field-level validation problems, reported as `errors` in the problem document. */
  errors?: FieldError[];
  /** Seconds a client should wait (rate limits, lockouts); sent as Retry-After. */
  retryAfter?: number;
  cause?: unknown;
}

/** The one error type domain code throws; transports translate it once each. */
export class AppError extends Error {
  readonly status: number;
  readonly errors?: FieldError[];
  readonly retryAfter?: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    opts: AppErrorOptions = {},
  ) {
    super(message ?? ERROR_CODES[code].title, { cause: opts.cause });
    this.name = 'AppError';
    this.status = ERROR_CODES[code].status;
    this.errors = opts.errors;
    this.retryAfter = opts.retryAfter;
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

function retryOf(e: unknown): 'again' | 'never' | undefined {
  if (!isAppError(e)) return undefined;
  const entry: { status: number; retry?: 'again' | 'never' } = ERROR_CODES[e.code];
  return entry.retry;
}

/** A coded error whose operation may succeed when repeated (see `retry` in ERROR_CODES). */
export function isTransient(e: unknown): e is AppError {
  return retryOf(e) === 'again';
}

/** A coded error no repetition can fix (see `retry` in ERROR_CODES). */
export function isPermanent(e: unknown): e is AppError {
  return retryOf(e) === 'never';
}

/** Driver errors (by class, or any class they extend) saying the database cannot be reached right now. */
const DATABASE_UNREACHABLE = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNotConnectedError',
  'MongooseServerSelectionError',
  'MongoTopologyClosedError',
  'MongoPoolClosedError',
]);

/**
 * The database is unreachable: the error's name or a class in its prototype chain is one of the above, so
 * subclasses such as the pool-cleared errors of a server-monitor timeout (MongoNetworkError) count too.
 */
function databaseUnreachable(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  if (DATABASE_UNREACHABLE.has(String((e as { name?: unknown }).name))) return true;
  for (
    let p = Object.getPrototypeOf(e) as object | null;
    p && p !== Object.prototype;
    p = Object.getPrototypeOf(p) as object | null
  ) {
    if (DATABASE_UNREACHABLE.has((p as { constructor?: { name?: string } }).constructor?.name ?? '')) return true;
  }
  return false;
}

/** Maps anything thrown to an AppError; unknown errors become `internal` without leaking their text. */
export function toAppError(e: unknown): AppError {
  if (e instanceof AppError) return e;
  const err = e as { name?: string; code?: unknown; message?: string };
  if (err?.name === 'ZodError') return fromZod(e as ZodLike);
  if (databaseUnreachable(e)) {
    return new AppError('service_unavailable', 'Database unavailable', { cause: e, retryAfter: 5 });
  }
  if (isDuplicateKey(e)) return duplicateKey(e as { keyPattern?: Record<string, unknown> });
  if (err?.name === 'CastError') {
    const field = (e as { path?: string }).path ?? 'id';
    return new AppError('validation_failed', `${field}: invalid identifier`, {
      cause: e,
      errors: [{ field, message: 'invalid identifier' }],
    });
  }
  if (err?.name === 'ValidationError' && typeof (e as { errors?: unknown }).errors === 'object')
    return fromMongooseValidation(e as MongooseValidationLike);
  return new AppError('internal', undefined, { cause: e });
}

/**
 * True when a write was refused by a unique index. MongoDB and mongo-java-server answer code 11000;
 * FerretDB v1 answers 11000 for inserts but code 1 (InternalError, "UNIQUE constraint failed") when an
 * update or upsert meets the index: recognised here so that it is a conflict, not an internal error.
 */
export function isDuplicateKey(e: unknown): boolean {
  const err = e as { code?: number; message?: string } | undefined;
  if (err?.code === 11000) return true;
  return err?.code === 1 && /UNIQUE constraint failed/.test(err.message ?? '');
}

/** MongoDB names the unique fields (keyPattern); FerretDB does not, so the field list may be empty. */
function duplicateKey(e: { keyPattern?: Record<string, unknown> }): AppError {
  const fields = Object.keys(e.keyPattern ?? {});
  if (!fields.length) return new AppError('conflict', 'Duplicate key', { cause: e });
  return new AppError('conflict', `Duplicate value for ${fields.join(', ')}`, {
    cause: e,
    errors: fields.map((field) => ({ field, message: 'already exists' })),
  });
}

interface MongooseValidationLike {
  errors: Record<string, { path?: string; message: string }>;
}

/** A document that failed its mongoose schema: a 400 naming each field, never a 500. */
function fromMongooseValidation(e: MongooseValidationLike): AppError {
  const errors = Object.entries(e.errors).map(([field, v]) => ({ field: v.path ?? field, message: v.message }));
  const first = errors[0];
  return new AppError('validation_failed', first ? `${first.field}: ${first.message}` : undefined, {
    cause: e,
    errors,
  });
}

interface ZodLike {
  issues: { path: PropertyKey[]; message: string; code?: string; keys?: string[] }[];
}

export function fromZod(e: ZodLike, prefix?: string): AppError {
  const errors = e.issues.flatMap((i) => {
    const at = [prefix, ...i.path.map(String)];
    // A strict schema's unknown fields: one error naming each field.
    if (i.code === 'unrecognized_keys' && i.keys?.length)
      return i.keys.map((k) => ({ field: [...at, k].filter(Boolean).join('.'), message: 'unknown field' }));
    return [{ field: at.filter(Boolean).join('.') || '(body)', message: i.message }];
  });
  const first = errors[0];
  return new AppError('validation_failed', first ? `${first.field}: ${first.message}` : undefined, { errors });
}

/** The shape every transport sends for an error (RFC 9457 fields plus `code`). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  correlationId?: string;
  instance?: string;
  errors?: FieldError[];
}

export function toProblem(e: AppError, correlationId?: string, instance?: string): Problem {
  return {
    type: `urn:consult:problem:${e.code}`,
    title: ERROR_CODES[e.code].title,
    status: e.status,
    detail: e.code === 'internal' ? 'An unexpected error occurred' : e.message,
    code: e.code,
    ...(correlationId ? { correlationId } : {}),
    ...(instance ? { instance } : {}),
    ...(e.errors ? { errors: e.errors } : {}),
  };
}
