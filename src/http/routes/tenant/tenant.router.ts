import { z } from 'zod';
import { op, type RouteGroup } from '../route-spec.js';

const Ping = z.object({
  tenant: z.string(),
  displayName: z.string(),
  status: z.literal('ok'),
  time: z.string().describe('ISO 8601 date-time'),
});

/** /api/tenant/ping: liveness of the tenant's API (no token needed). */
export const tenantRoutes: RouteGroup = {
  base: '/api/tenant',
  tag: 'Tenant',
  routes: [
    op({
      operationId: 'tenant.ping',
      requires: 'public',
      method: 'get',
      path: '/ping',
      response: Ping,
      summary: "Liveness of the tenant's API: the tenant named by the host and the server time",
      example: {
        response: { tenant: 'demo', displayName: 'Demo Hospital', status: 'ok', time: '2026-01-05T09:30:00.000Z' },
      },
      handle: (_s, { req }) => ({
        tenant: req.tenant!.name,
        displayName: req.tenant!.displayName,
        status: 'ok',
        time: new Date().toISOString(),
      }),
    }),
  ],
};
