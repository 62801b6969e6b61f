import { Router } from 'express';
import type { Infra } from '../../composition.js';

type Check = () => Promise<unknown>;

async function timed(check: Check, timeoutMs: number): Promise<{ status: 'up' | 'down'; ms: number; error?: string }> {
  const t0 = Date.now();
  try {
    await Promise.race([check(), new Promise((_, rej) => setTimeout(() => rej(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs).unref())]);
    return { status: 'up', ms: Date.now() - t0 };
  } catch (e) {
    return { status: 'down', ms: Date.now() - t0, error: (e as Error).message };
  }
}

/** /healthz (process up), /readyz (each dependency reachable). Metrics have their own listener (metrics-server.ts). */
export function healthRouter(infra: Infra): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'up', node: infra.config.nodeId, uptimeSeconds: Math.round(process.uptime()) });
  });
  r.get('/readyz', async (_req, res) => {
    const [redis, mongodb, objectStore] = await Promise.all([
      timed(() => infra.redis.ping(), 2000),
      timed(() => infra.mongo.ping(), 2000),
      timed(() => infra.store.ping(), 2000),
    ]);
    const checks = { redis, mongodb, objectStore: { ...objectStore, driver: infra.store.driver } };
    const ready = Object.values(checks).every((c) => c.status === 'up');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  return r;
}
