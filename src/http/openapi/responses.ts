import { ERROR_CODES, type ErrorCode } from '../../kernel/errors.js';
import type { Requirement } from '../../kernel/requirement.js';
import { isProbe, type RouteSpec } from '../routes/route-spec.js';

type Json = Record<string, unknown>;

/** Whether the operation reads a request body (so body-parser refusals apply). */
export function hasBody(spec: RouteSpec): boolean {
  return Boolean(spec.body || spec.multipart);
}

/**
 * Every problem code an operation can answer with, from what the middleware chain in front of it
 * does (app.ts: per-address limit, tenant host, token, body parsers; the route: tenant, guard,
 * route limits, validation) and what its service throws (`spec.errors`).
 */
export function problemCodes(spec: RouteSpec, requires: Requirement): ErrorCode[] {
  if (isProbe(spec.operationId)) return [...(spec.errors ?? [])];
  const codes = new Set<ErrorCode>([
    'bad_request',
    'tenant_not_found',
    'route_not_found',
    'rate_limited',
    'service_unavailable',
  ]);
  if (spec.params || spec.query || spec.body || spec.multipart) codes.add('validation_failed');
  if (spec.body && !spec.form) codes.add('malformed_json');
  if (hasBody(spec)) ['payload_too_large', 'unsupported_media_type'].forEach((c) => codes.add(c as ErrorCode));
  // A bearer token is verified on every tenant-host request except the sign-in routes, which ignore it.
  if (!spec.signIn)
    ['token_invalid', 'token_expired', 'session_revoked', 'unauthenticated', 'wrong_tenant'].forEach((c) =>
      codes.add(c as ErrorCode),
    );
  if (requires !== 'public') codes.add('unauthenticated');
  if (requires !== 'public' && requires !== 'authenticated') codes.add('permission_denied');
  if (spec.rateLimit) codes.add('rate_limited');
  if (spec.binary) codes.add('range_not_satisfiable');
  for (const c of spec.errors ?? []) codes.add(c);
  if (!spec.binary?.ranged) codes.delete('range_not_satisfiable');
  return [...codes];
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: `errors[].field` names each invalid field',
  401: 'Not signed in, token invalid or expired, or credentials refused',
  403: 'Refused: permission missing, token of another tenant, or not allowed in this state',
  404: 'Not found (ids of other tenants are not found either); also an unknown tenant host',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Body or file too large',
  415: 'Unsupported body or file type',
  416: 'Range not satisfiable (Content-Range names the size)',
  422: 'Well-formed but refused by a policy',
  423: 'Locked',
  429: 'Too many requests: retry after Retry-After seconds',
  503: 'Temporarily unavailable: retry after Retry-After seconds',
  504: 'Timed out',
};

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } };

/**
 * Problem responses by status: the Problem schema with `code` narrowed to the codes of that status. Many
 * operations answer the same codes under a status, so each distinct (status, codes) response is written
 * once under `components.responses` (named after its status and codes) and operations refer to it.
 */
export class ProblemResponses {
  private readonly shared = new Map<string, Json>();

  /** The operation's problem responses: a `$ref` per status to the shared response of its codes. */
  forCodes(codes: ErrorCode[]): Record<string, Json> {
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes) byStatus.set(ERROR_CODES[c].status, [...(byStatus.get(ERROR_CODES[c].status) ?? []), c]);
    const out: Record<string, Json> = {};
    for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
      const sorted = [...new Set(list)].sort();
      const name = `Problem${status}.${sorted.join('.')}`;
      if (!this.shared.has(name)) this.shared.set(name, problemResponse(status, sorted));
      out[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    return out;
  }

  /** Every shared response referred to so far (components.responses), in name order. */
  components(): Record<string, Json> {
    return Object.fromEntries([...this.shared].sort(([a], [b]) => a.localeCompare(b)));
  }
}

function problemResponse(status: number, sorted: ErrorCode[]): Json {
  const examples = Object.fromEntries(sorted.map((code) => [code, { $ref: `#/components/examples/${code}` }]));
  return {
    description: `${STATUS_TEXT[status] ?? ERROR_CODES[sorted[0]!].title}. Codes: ${sorted.map((c) => `\`${c}\``).join(', ')}.`,
    ...(status === 429 || status === 503 || sorted.includes('login_code_pending') || sorted.includes('account_locked')
      ? { headers: retryAfter }
      : {}),
    content: {
      'application/problem+json': {
        schema: {
          allOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { code: { enum: sorted } } }],
        },
        examples,
      },
    },
  };
}

/** One example problem document per error code (src/kernel/errors.ts) (components.examples). */
export function problemExamples(): Record<string, Json> {
  return Object.fromEntries(
    (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => [
      code,
      { summary: ERROR_CODES[code].title, value: problemExample(code) },
    ]),
  );
}

function problemExample(code: ErrorCode): Json {
  const e = ERROR_CODES[code];
  return {
    type: `urn:consult:problem:${code}`,
    title: e.title,
    status: e.status,
    detail: e.title,
    code,
    correlationId: '6f1c2a0e-3b7d-4c8a-9e21-5d4b3a2f1e0c',
  };
}
