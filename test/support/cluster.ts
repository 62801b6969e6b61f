import { actorSystemOf } from '../../src/actors/runtime/index.js';
import { waitForMembers } from './actor-kit.js';
import { createUser, tokenFor } from './auth.js';
import { spawnChildNode, type ChildNode } from './child-node.js';
import { testEnv, uniqueId } from './env.js';
import { request } from './http.js';
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

/** Creates the users in tenant `acme` through `node`; their ids and access tokens by username. */
async function createHubUsers(node: TestNode, users: readonly HubUser[]) {
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  for (const [username, role] of users) {
    ids[username] = await createUser(node, 'acme', {
      username,
      role,
      ...(role === 'device' ? { kind: 'device' as const } : {}),
    });
    tokens[username] = await tokenFor(node, 'acme', username);
  }
  return { ids, tokens };
}

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
  const { ids, tokens } = await createHubUsers(cluster.nodes[0]!, users);
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

/**
 * The fixture of the hub tests that kill a node: an in-process node and a child-process node (which a
 * test may SIGKILL) sharing databases and Redis prefix, both members of the actor system before it
 * returns; the users of tenant `acme` with their ids and tokens; `on(url, user)` opens a real socket
 * (socket.io-client's default transports) on the node at `url`, `rest` calls the REST API as a user.
 * `destroy` closes the opened sockets, kills the child and stops the node.
 */
export async function startHubPair(
  users: readonly HubUser[],
  opts: { childName: string; shards: number; env?: Record<string, string> },
) {
  const id = uniqueId();
  const shared = {
    ROLES: 'http,hub,actors',
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: String(opts.shards),
    ACTOR_LEASE_MS: '1500',
    ...opts.env,
  };
  const childId = `${opts.childName}-${id}`;
  const node = await startTestNode(shared);
  const open: HubClient[] = [];
  let child: ChildNode | undefined;
  const destroy = async () => {
    for (const s of open) s.close();
    if (child) await child.kill();
    await node.destroy();
  };
  try {
    const { ids, tokens } = await createHubUsers(node, users);
    child = await spawnChildNode(testEnv({ ...shared, NODE_ID: childId, LOG_LEVEL: 'warn' }));
    await waitForMembers(actorSystemOf(node.roles), [node.config.nodeId, childId]);
    return {
      node,
      child,
      childId,
      ids,
      tokens,
      /** Opens (and tracks for closing) a socket of `user` on the node at `url`. */
      async on(url: string, user: string): Promise<HubClient> {
        const s = await defaultConnect(url, 'acme', { token: tokens[user] });
        open.push(s);
        return s;
      },
      rest(url: string, user: string, method: string, path: string, body?: unknown) {
        return request(url, method, path, { tenant: 'acme', token: tokens[user], ...(body ? { body } : {}) });
      },
      destroy,
    };
  } catch (e) {
    await destroy();
    throw e;
  }
}
