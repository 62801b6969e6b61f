import express, { type Express, type Router } from 'express';
import './types.js';
import type { Services } from '../app/index.js';
import type { Infra } from '../app/index.js';
import { requestContext } from './middleware/request-context.js';
import { securityHeaders } from './middleware/security-headers.js';
import { corsPolicy } from '../edge/cors.js';
import { resolveTenant } from './middleware/tenant.js';
import { authenticate } from './middleware/auth.js';
import { errorHandler, notFound } from './middleware/errors.js';
import { probeRoutes, restRoutes } from './routes/index.js';
import { API_GROUPS } from './routes/groups.js';
import { signInRoutes } from './routes/route-spec.js';
import { compileTrustProxy } from '../config/trust-proxy.js';
import { rateLimit, byIp, PER_IP_BUCKET } from '../edge/rate-limit.js';

export interface HttpAppOptions {
  /** Routers mounted before the tenant resolver (e.g. the embedded identity provider under /realms). */
  preTenant?: { path: string; router: Router | Express }[];
  /** Extra routers mounted on tenant hosts, in order (added by each capability). */
  routes?: { path: string; router: Router }[];
}

/**
 * The Express application: context -> tenant -> body parsing -> routes -> 404 -> problem errors.
 * Everything after the health probes (realm pages, REST, GraphQL) counts against the per-IP limit.
 * Routers are thin: they validate, call one service method and present the result.
 */
export function createHttpApp(infra: Infra, services: Services, opts: HttpAppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  const trust = compileTrustProxy(infra.config.http.trustProxy);
  app.set('trust proxy', trust);
  app.set('query parser', 'simple');
  app.use(requestContext(infra.logger, infra.metrics, trust));
  app.use(securityHeaders());
  for (const m of probeRoutes(infra, services)) app.use(m.path, m.router);
  app.use(perIpLimit(infra));
  for (const m of opts.preTenant ?? []) app.use(m.path, m.router);
  app.use(resolveTenant(services.tenants, infra.mongo, infra.config.http.baseDomain));
  app.use(
    corsPolicy({
      deploymentOrigins: infra.config.http.corsOrigins,
      baseDomain: infra.config.http.baseDomain,
      tenantOrigins: (t) => services.admin.allowedOrigins(t),
    }),
  );
  app.use(authenticate(services.auth, signInRoutes(API_GROUPS)));
  app.use(express.json({ limit: infra.config.http.bodyLimit }));
  app.use(express.urlencoded({ extended: false, limit: infra.config.http.bodyLimit }));
  for (const m of restRoutes(infra, services)) app.use(m.path, m.router);
  for (const m of opts.routes ?? []) app.use(m.path, m.router);
  app.use(notFound);
  app.use(errorHandler(infra.logger));
  return app;
}

/** RATE_LIMIT_PER_IP over RATE_LIMIT_WINDOW_SECONDS per client address, shared by every node (and the hub handshake). */
function perIpLimit(infra: Infra) {
  const l = infra.config.limits;
  return rateLimit({ redis: infra.redis, keyFor: infra.keys.rateLimit }, [
    { bucket: PER_IP_BUCKET, limit: l.perIp, windowSeconds: l.windowSeconds, key: byIp },
  ]);
}
