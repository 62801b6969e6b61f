import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { Services } from '../../app/index.js';
import type { Infra } from '../../app/index.js';
import type { Requirement } from '../../kernel/requirement.js';
import type { Principal } from '../../kernel/principal.js';
import { AppError, type ErrorCode } from '../../kernel/errors.js';
import { guard, principalOf } from '../middleware/auth.js';
import { rateLimit, type RateLimitRule } from '../../edge/rate-limit.js';
import { requireTenant } from '../middleware/tenant.js';
import { parse } from '../validate.js';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/**
 * Operations outside docs/permissions.md: the liveness and readiness probes, served on any host
 * before tenant resolution and the per-address limit, to anyone (orchestrators call them).
 */
export const PROBES = ['health.live', 'health.ready'] as const;

export function isProbe(id: string): id is (typeof PROBES)[number] {
  return (PROBES as readonly string[]).includes(id);
}

export interface HandlerInput<
  P extends AnyObject | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
> {
  /** The signed-in principal; reading it on a `public` route without a token throws 401. */
  readonly p: Principal;
  params: P extends AnyObject ? z.infer<P> : Record<string, never>;
  query: Q extends z.ZodType ? z.infer<Q> : Record<string, never>;
  body: B extends z.ZodType ? z.infer<B> : undefined;
  req: Request;
  res: Response;
  infra: Infra;
}

/** A documented response header (Location, Retry-After, Content-Range...). */
export interface HeaderDoc {
  description: string;
  schema?: Record<string, unknown>;
}

/** A success response other than the main one (e.g. 200 for a repeated idempotent upload beside 201). */
export interface ExtraResponse {
  description: string;
  /** JSON body; absent for an empty body. */
  schema?: z.ZodType;
  headers?: Record<string, HeaderDoc>;
}

/**
 * One REST operation: its id, method and path, what the caller needs, zod schemas in and out, what else
 * its transport needs, and the handler. The router, the OpenAPI document and docs/permissions.md are all
 * built from these, so they cannot drift apart (docs/decisions/700-one-route-style.md, 1127).
 */
export interface RouteSpec<
  P extends AnyObject | undefined = AnyObject | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  /** Unique over every transport, e.g. `events.get`; the OpenAPI operationId and docs/permissions.md row. */
  operationId: string;
  method: 'get' | 'post' | 'patch';
  /** Express path relative to the group base, e.g. `/get/:eventId`; `*name` spans several segments. */
  path: string;
  /** What the caller needs: the guard answers 401 without a principal, 403 without the permission. */
  requires: Requirement;
  /** The rule beyond the permission, in words (ownership, host of the event...): docs/permissions.md and OpenAPI. */
  note?: string;
  /**
   * A sign-in endpoint: it proves the caller by its body (refresh token, login code, PIN...), so a bearer
   * token sent along, often an expired one, is ignored rather than refused.
   */
  signIn?: true;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  /** JSON body (or form-urlencoded with `form: true`), parsed before the handler runs. */
  body?: B;
  /** The body is `application/x-www-form-urlencoded` (OpenID Connect back-channel logout). */
  form?: boolean;
  /**
   * multipart/form-data body: the text fields' schema and the file part names. The handler reads
   * the parts itself (`streaming` ones straight from the socket, without buffering the file).
   */
  multipart?: {
    fields: AnyObject;
    files: { name: string; description: string; required?: boolean }[];
    streaming?: boolean;
  };
  /** JSON body of the success response. */
  response?: z.ZodType;
  /** A file instead of JSON: ETag/304 always; `ranged` adds byte ranges (206, 416). */
  binary?: { description: string; ranged: boolean };
  /** Success with an empty body. */
  empty?: boolean;
  /** Status of the success response (default 200); the handler may answer one of `alsoAnswers` instead. */
  status?: 200 | 201 | 202;
  alsoAnswers?: Partial<Record<number, ExtraResponse>>;
  /** Headers of the success response. */
  headers?: Record<string, HeaderDoc>;
  /** Served on any host (default: tenant hosts only, 404 tenant_not_found elsewhere). */
  anyHost?: boolean;
  /** Limits counted for this route on top of the per-address one every route has. */
  rateLimit?(infra: Infra): RateLimitRule[];
  /** Codes this operation answers beyond those every route can (docs/api/errors in the document). */
  errors?: ErrorCode[];
  /**
   * OpenAPI links from the success response to the operations that use what it returns (runtime
   * expressions such as `$response.body#/id`); clients and the contract test's stateful phase follow them.
   */
  links?: Record<
    string,
    { operationId: string; parameters?: Record<string, string>; requestBody?: unknown; description?: string }
  >;
  /** Example request body and response, shown in the document. */
  example?: { request?: unknown; response?: unknown };
  handle(services: Services, input: HandlerInput<P, Q, B>): Promise<unknown> | unknown;
}

export interface RouteGroup {
  /** Mount path of the group ('' for the host root). */
  base: string;
  tag: string;
  description?: string;
  routes: RouteSpec[];
}

/** Keeps each spec's generic types while collecting them in one array. */
export function op<P extends AnyObject | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

/**
 * Builds the Express router of a group: tenant host -> guard -> route limits -> validate -> one
 * service call -> JSON (or whatever the handler wrote itself: files, empty bodies, redirects).
 */
export function routerFor(group: RouteGroup, services: Services, infra: Infra): Router {
  const r = Router();
  for (const spec of group.routes) {
    const chain: RequestHandler[] = [];
    if (!spec.anyHost) chain.push(requireTenant);
    if (!isProbe(spec.operationId)) chain.push(guard(spec.requires));
    const rules = spec.rateLimit?.(infra);
    if (rules?.length) chain.push(rateLimit({ redis: infra.redis, keyFor: infra.keys.rateLimit }, rules));
    r[spec.method](spec.path, ...chain, async (req, res) => {
      const input = {
        get p() {
          return principalOf(req);
        },
        params: spec.params ? parse(spec.params, req.params, 'params') : {},
        query: spec.query ? parse(spec.query, req.query, 'query') : {},
        body: spec.body ? parse(spec.body, req.body) : undefined,
        req,
        res,
        infra,
      };
      res.status(spec.status ?? 200);
      const out = await spec.handle(services, input as HandlerInput<AnyObject, z.ZodType, z.ZodType>);
      if (!res.headersSent) res.json(out);
    });
  }
  for (const [path, methods] of methodsByPath(group)) r.all(path, methodNotAllowed(methods));
  return r;
}

/** `METHOD /full/path` of every sign-in route: the token check skips them (authenticate in middleware/auth.ts). */
export function signInRoutes(groups: readonly RouteGroup[]): Set<string> {
  return new Set(
    groups.flatMap((g) => g.routes.filter((s) => s.signIn).map((s) => `${s.method.toUpperCase()} ${g.base}${s.path}`)),
  );
}

function methodsByPath(group: RouteGroup): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of group.routes)
    out.set(s.path, [...(out.get(s.path) ?? []), s.method.toUpperCase(), ...(s.method === 'get' ? ['HEAD'] : [])]);
  return out;
}

/**
 * A declared path asked with another method: 405 `method_not_allowed` with the Allow header
 * (RFC 9110 15.5.6), rather than 404 as if the path did not exist. OPTIONS goes on to CORS and Express.
 */
function methodNotAllowed(methods: string[]): RequestHandler {
  const allow = methods.join(', ');
  return function methodNotAllowed(req, res, next) {
    if (req.method === 'OPTIONS') return next();
    res.set('Allow', allow);
    throw new AppError('method_not_allowed', `${req.method} is not allowed here; allowed: ${allow}`);
  };
}
