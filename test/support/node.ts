import { startNode, type NodeHandle } from '../../src/node.js';
import { testConfig } from './env.js';
import { client } from './http.js';

export interface TestNode extends NodeHandle {
  http: ReturnType<typeof client>;
  /** Drops every database this node created (catalog and tenants) and stops it. */
  destroy(): Promise<void>;
}

/** Starts a node on an ephemeral port with its own databases and key prefix. */
export async function startTestNode(env: Record<string, string> = {}): Promise<TestNode> {
  const config = testConfig({ ROLES: 'http', ...env });
  const node = await startNode(config);
  return Object.assign(node, {
    http: client(node.url!),
    async destroy() {
      try {
        const tenants = await node.services.tenants.list().catch(() => []);
        for (const t of tenants) await node.infra.mongo.dropTenantDb(t.name).catch(() => undefined);
        await node.infra.mongo.conn.useDb(config.mongo.catalogDb).dropDatabase().catch(() => undefined);
      } finally {
        await node.stop();
      }
    },
  });
}
