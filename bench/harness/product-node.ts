/**
 * Hosted module: one real product node (src/composition/node.ts startNode) with the roles in `env.ROLES`, plus the
 * fixtures benchmarks call on it over IPC (tenants, users, tokens, seeded data, metrics).
 */
import { loadConfig } from '../../src/config/config.js';
import { startNode } from '../../src/composition/node.js';
import type { Hosted } from './host.js';
import { fixtures } from './fixtures.js';

export async function start(params: { env: Record<string, string> }): Promise<Hosted> {
  const config = loadConfig({ ...params.env });
  const node = await startNode(config);
  const grpc = [...node.roles.values()].map((h) => (h as { port?: number }).port).find((p) => typeof p === 'number');
  return {
    info: {
      url: node.url,
      nodeId: config.nodeId,
      grpcPort: grpc ?? null,
      pid: process.pid,
      // Where the product's modules load from: dist/ when compiled, src/ through tsx (compiled.ts).
      nodeModule: import.meta.resolve('../../src/composition/node.js'),
    },
    calls: fixtures(node),
    stop: () => node.stop(),
  };
}
