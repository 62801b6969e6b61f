import { uniqueId } from './env.js';
import { startTestNode, type TestNode } from './node.js';

/**
 * Starts `n` nodes that share databases and Redis prefix (one cluster), each with http, hub and
 * actors roles. `destroy` stops them all and drops the shared databases once.
 */
export async function startCluster(n: number, env: Record<string, string> = {}) {
  const id = uniqueId();
  const shared = {
    ROLES: 'http,hub,actors',
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ...env,
  };
  const nodes: TestNode[] = [];
  for (let i = 0; i < n; i++) nodes.push(await startTestNode(shared));
  return {
    nodes,
    shared,
    async destroy() {
      for (const node of nodes.slice(1).reverse()) await node.stop().catch(() => undefined);
      await nodes[0]!.destroy();
    },
  };
}
