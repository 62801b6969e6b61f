import { z } from 'zod';
import { op, type RouteGroup } from './route-spec.js';
import { redisReadiness } from '../../data/redis-readiness.js';
import type { Services } from '../../app/index.js';

type Check = () => Promise<unknown>;

async function timed(check: Check, timeoutMs: number): Promise<{ status: 'up' | 'down'; ms: number; error?: string }> {
  const t0 = Date.now();
  try {
    await Promise.race([
      check(),
      new Promise((_, rej) => setTimeout(() => rej(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
    return { status: 'up', ms: Date.now() - t0 };
  } catch (e) {
    return { status: 'down', ms: Date.now() - t0, error: (e as Error).message };
  }
}

const Live = z.object({ status: z.literal('up'), node: z.string(), uptimeSeconds: z.number().int() });
const CheckResult = z.object({ status: z.enum(['up', 'down']), ms: z.number().int(), error: z.string().optional() });
const Ready = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.object({
    redis: CheckResult,
    mongodb: CheckResult,
    objectStore: CheckResult.extend({ driver: z.string() }),
    /** The in-memory contact directory's loading at start (absent where it is off): up once done. */
    directory: CheckResult.extend({ tenantsLoaded: z.number().int(), tenants: z.number().int() }).optional(),
  }),
});

/** The directory's start loading as a check (decision 1139): down, with its progress, until it is done. */
function directoryCheck(d: NonNullable<Services['contactDirectory']>): z.infer<typeof Ready>['checks']['directory'] {
  const w = d.warmth();
  if (!w)
    return {
      status: 'down',
      ms: 0,
      error: 'the contact directory has not started loading',
      tenantsLoaded: 0,
      tenants: 0,
    };
  const progress = { ms: Math.round(w.ms), tenantsLoaded: w.loaded, tenants: w.total };
  if (w.done) return { status: 'up', ...progress };
  return { status: 'down', ...progress, error: `loading the contact directory (${w.loaded} of ${w.total} tenants)` };
}

/**
 * /healthz (process up), /readyz (each dependency reachable), on any host and before the per-address
 * limit (app.ts mounts them first). Metrics have their own listener (metrics-server.ts).
 */
export const healthRoutes: RouteGroup = {
  base: '',
  tag: 'Health',
  routes: [
    op({
      operationId: 'health.live',
      requires: 'public',
      method: 'get',
      path: '/healthz',
      response: Live,
      anyHost: true,
      summary: 'Liveness: the process is up',
      handle: (_s, { infra }) => ({
        status: 'up',
        node: infra.config.nodeId,
        uptimeSeconds: Math.round(process.uptime()),
      }),
    }),
    op({
      operationId: 'health.ready',
      requires: 'public',
      method: 'get',
      path: '/readyz',
      response: Ready,
      anyHost: true,
      alsoAnswers: { 503: { description: 'A dependency is unreachable (same body, status not_ready)', schema: Ready } },
      summary:
        'Readiness: Redis (every master of a cluster, with cluster_state ok), MongoDB and the object store each answer, and the contact directory has loaded at start',
      handle: async (services, { infra, res }) => {
        const [redis, mongodb, objectStore] = await Promise.all([
          timed(() => redisReadiness(infra.redis, 1500), 2000),
          timed(() => infra.mongo.ping(), 2000),
          timed(() => infra.store.ping(), 2000),
        ]);
        const directory = services.contactDirectory && directoryCheck(services.contactDirectory);
        const checks = {
          redis,
          mongodb,
          objectStore: { ...objectStore, driver: infra.store.driver },
          ...(directory && { directory }),
        };
        const ready = Object.values(checks).every((c) => c.status === 'up');
        res.status(ready ? 200 : 503);
        return { status: ready ? 'ready' : 'not_ready', checks };
      },
    }),
  ],
};
