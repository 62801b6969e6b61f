import { createUser, tokenFor } from './auth.js';
import { uniqueId } from './env.js';
import { connect as defaultConnect, type HubClient } from './hub-client.js';
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

/** A user of a hub cluster: username and role (devices get the device kind). */
export type HubUser = readonly [username: string, role: string];

/**
 * The fixture of the multi-node hub tests: a cluster of `n` nodes, the users of tenant `acme` created
 * on node 0 with their ids and access tokens, and `on(i, user)` that opens a real socket for a user on
 * node i (through `connect`, websocket only unless another is given). `destroy` closes the opened
 * sockets, then the cluster.
 */
export async function startHubCluster(
  n: number,
  users: readonly HubUser[],
  opts: { env?: Record<string, string>; connect?: typeof defaultConnect } = {},
) {
  const cluster = await startCluster(n, opts.env);
  const node0 = cluster.nodes[0]!;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  for (const [username, role] of users) {
    ids[username] = await createUser(node0, 'acme', {
      username,
      role,
      ...(role === 'device' ? { kind: 'device' as const } : {}),
    });
    tokens[username] = await tokenFor(node0, 'acme', username);
  }
  const open: HubClient[] = [];
  const connect = opts.connect ?? defaultConnect;
  return {
    ...cluster,
    ids,
    tokens,
    /** Opens (and tracks for closing) a socket of `user` on node `i`. */
    async on(i: number, user: string): Promise<HubClient> {
      const s = await connect(cluster.nodes[i]!.url!, 'acme', { token: tokens[user] });
      open.push(s);
      return s;
    },
    /** Tracks a socket opened elsewhere so `destroy` closes it. */
    track(s: HubClient): HubClient {
      open.push(s);
      return s;
    },
    async destroy() {
      for (const s of open) s.close();
      await cluster.destroy();
    },
  };
}
