import type { IncomingMessage } from 'node:http';
import cors, { type CorsOptions, type CorsOptionsDelegate } from 'cors';
import type { RequestHandler } from 'express';
import { tenantFromHost } from './tenant-host.js';

export interface CorsPolicyDeps {
  /** Origins every tenant host accepts (CORS_ORIGINS), normalised `scheme://host[:port]`. */
  deploymentOrigins: readonly string[];
  baseDomain: string;
  /** The tenant's own allowed origins (TenantConfig `cors.allowedOrigins`). */
  tenantOrigins(tenant: string): Promise<readonly string[]>;
}

const ALLOWED: CorsOptions = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: [
    'authorization',
    'content-type',
    'x-correlation-id',
    'if-none-match',
    'if-match',
    'range',
    'apollo-require-preflight',
  ],
  exposedHeaders: ['x-correlation-id', 'retry-after', 'etag', 'content-range', 'content-disposition', 'location'],
  // Tokens travel in the Authorization header, never in cookies.
  credentials: false,
  maxAge: 600,
};

/**
 * Cross-origin access: none by default. An origin is allowed when the deployment (CORS_ORIGINS) or the
 * tenant named by the Host (TenantConfig) lists it; the allowed origin is echoed, never `*`. A request
 * from any other origin gets no CORS headers, so browsers keep its page from reading the answer.
 * Native apps and headsets send no Origin and are not affected.
 */
export function corsDelegate(deps: CorsPolicyDeps): CorsOptionsDelegate<IncomingMessage> {
  const deployment = new Set(deps.deploymentOrigins.map((o) => o.toLowerCase()));
  return (req, callback) => {
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin.toLowerCase() : undefined;
    if (!origin) return callback(null, { origin: false });
    if (deployment.has(origin)) return callback(null, { ...ALLOWED, origin: req.headers.origin });
    const tenant = tenantFromHost(req.headers.host, deps.baseDomain);
    if (!tenant) return callback(null, { origin: false });
    deps.tenantOrigins(tenant).then(
      (list) =>
        callback(
          null,
          list.some((o) => o.toLowerCase() === origin) ? { ...ALLOWED, origin: req.headers.origin } : { origin: false },
        ),
      (err: Error) => callback(err),
    );
  };
}

/** Express middleware of the same policy (preflights answered 204 when allowed). */
export function corsPolicy(deps: CorsPolicyDeps): RequestHandler {
  return cors(corsDelegate(deps) as CorsOptionsDelegate) as RequestHandler;
}
