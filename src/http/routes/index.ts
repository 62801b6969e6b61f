import type { Router } from 'express';
import type { Services } from '../../app/index.js';
import type { Infra } from '../../app/index.js';
import { API_GROUPS, PROBE_GROUPS } from './groups.js';
import { routerFor } from './route-spec.js';
import { docsRouter } from '../openapi/docs.router.js';
import { graphqlRouter } from '../graphql/graphql.router.js';
import { webPagesRouter } from '../pages/web-pages.router.js';

/** Mounted routers; `path` is the group base ('' mounts at the root). */
export interface Mount {
  path: string;
  router: Router;
}

const mountOf =
  (infra: Infra, services: Services) =>
  (g: (typeof API_GROUPS)[number]): Mount => ({ path: g.base || '/', router: routerFor(g, services, infra) });

/** The probes (/healthz, /readyz), mounted first by app.ts. */
export function probeRoutes(infra: Infra, services: Services): Mount[] {
  return PROBE_GROUPS.map(mountOf(infra, services));
}

/**
 * Every REST router and where it is mounted: one per declared route group (groups.ts), then the
 * documentation, GraphQL and the sign-in and QR approval pages, which are not REST operations of the
 * specification.
 */
export function restRoutes(infra: Infra, services: Services): Mount[] {
  return [
    ...API_GROUPS.map(mountOf(infra, services)),
    { path: '/api/docs', router: docsRouter() },
    { path: '/', router: webPagesRouter(services) },
    {
      path: '/graphql',
      router: graphqlRouter(services, infra.logger, {
        timeBudgetMs: infra.config.limits.graphqlTimeBudgetMs,
        pageMaxTake: infra.config.limits.pageMaxTake,
      }),
    },
  ];
}
