import type { RequestHandler } from 'express';
import { AppError } from '../../kernel/errors.js';
import type { AuthServices } from '../../app/index.js';
import { satisfies, type Requirement } from '../../kernel/requirement.js';
import type { Principal } from '../../kernel/principal.js';
import { recordBy } from '../../core/audit/audit-by.js';

/** The bearer token of an Authorization header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/** The GraphQL endpoint (mounted at /graphql). */
function isGraphQlPath(path: string): boolean {
  return path === '/graphql' || path.startsWith('/graphql/');
}

/**
 * Establishes `req.principal` from a bearer token on tenant hosts. A request without a token passes
 * through unauthenticated (`guard` decides); a token that fails verification is refused with 401, and
 * a token of another tenant with 403 `wrong_tenant` (on /graphql: kept in `req.authError`, answered as a
 * GraphQL error with the same code and status). Every request made while impersonating is an audit
 * entry naming both identities (method and path only: a query string may carry a secret).
 *
 * Sign-in endpoints (`METHOD /path` in `signInRoutes`, the route specs marked `signIn`) prove the caller
 * by their body; a client often still sends its old, possibly expired, bearer token there, which is
 * ignored rather than refused.
 */
export function authenticate(
  auth: Pick<AuthServices, 'verifyAccessToken' | 'audit'>,
  signInRoutes: ReadonlySet<string>,
): RequestHandler {
  return async (req, _res, next) => {
    const header = req.get('authorization');
    if (!header || !req.tenant || signInRoutes.has(`${req.method} ${req.path}`)) return next();
    try {
      const token = bearerToken(header);
      if (!token) throw new AppError('unauthenticated', 'Authorization header must be a Bearer token');
      req.principal = await auth.verifyAccessToken(req.tenant.name, token);
      if (req.principal.actorUserId)
        await recordBy(auth.audit, req.principal, 'impersonation.request', {
          subjectId: req.principal.userId,
          details: { via: 'rest', method: req.method, path: req.path },
        });
    } catch (err) {
      // GraphQL clients expect a GraphQL response: the endpoint answers the refusal in its own shape.
      if (!isGraphQlPath(req.path) || !(err instanceof AppError)) throw err;
      req.authError = err;
    }
    next();
  };
}

/** Enforces what an operation requires: 401 without a principal, 403 without the permission. */
export function guard(required: Requirement): RequestHandler {
  return (req, _res, next) => {
    if (required === 'public') return next();
    if (!req.principal) throw new AppError('unauthenticated', 'Sign in to use this endpoint');
    if (!satisfies(required, req.principal.permissions))
      throw new AppError('permission_denied', `This operation requires the '${required}' permission`);
    next();
  };
}

/** The principal of a guarded request (guard has run, so it is present). */
export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError('unauthenticated', 'Sign in to use this endpoint');
  return req.principal;
}

/** Verifies a token for a tenant outside HTTP (the hub handshake): `verifyAccessToken(services.auth)(tenant, token)`. */
export function verifyAccessToken(
  auth: Pick<AuthServices, 'verifyAccessToken'>,
): (tenant: string, token: string) => Promise<Principal> {
  return (tenant, token) => auth.verifyAccessToken(tenant, token);
}
