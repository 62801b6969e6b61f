import mongoose from 'mongoose';
import { startNode, type NodeHandle, type NodeOverrides } from '../../src/composition/node.js';
import { testConfig } from './env.js';
import { client } from './http.js';

export interface TestNode extends NodeHandle {
  http: ReturnType<typeof client>;
  /** Drops every database this node created (catalog and tenants) and stops it. */
  destroy(): Promise<void>;
}

/**
 * Starts a node on an ephemeral port with its own databases and key prefix. `overrides`: what the node is
 * given instead of building it (a push publisher that records, for actor tests).
 */
export async function startTestNode(
  env: Record<string, string> = {},
  overrides: NodeOverrides = {},
): Promise<TestNode> {
  const config = testConfig({ ROLES: 'http', ...env });
  const node = await startNode(config, overrides);
  return Object.assign(node, {
    http: client(node.url!),
    async destroy() {
      const names = [
        ...(await node.services.tenants.list().catch(() => [])).map((t) => node.infra.mongo.dbName(t.name)),
        config.mongo.catalogDb,
      ];
      await node.stop();
      // Dropped only once the node stopped (its last writes, e.g. lastSeenAt, are flushed on stop), from a
      // connection of its own: a database dropped under a live writer is recreated, or upsets FerretDB.
      const conn = await mongoose
        .createConnection(config.mongo.uri, { serverSelectionTimeoutMS: 5000 })
        .asPromise()
        .catch(() => undefined);
      if (!conn) return;
      try {
        for (const name of names)
          await conn
            .useDb(name)
            .dropDatabase()
            .catch(() => undefined);
      } finally {
        await conn.close();
      }
    },
  });
}
