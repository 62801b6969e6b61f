import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseRedisUrl } from '../config/redis-url.js';

/**
 * A connection to the configured Redis: one server, or a Redis Cluster (decision 860). Both speak the
 * same commands; on a cluster every multi-key command, script or transaction must name keys of one
 * slot (src/data/redis-keys.ts gives them shared hash tags).
 */
export type RedisClient = Redis | Cluster;

/**
 * What a caller may set on a connection. On a cluster, `retryStrategy` becomes the cluster's
 * `clusterRetryStrategy`, `enableAutoPipelining` and `enableOfflineQueue` apply to the cluster client,
 * and the rest to its connection to each node.
 */
export type RedisConnectionOptions = RedisOptions & {
  /** Cluster only: one subscriber per master for SSUBSCRIBE (the sharded Socket.IO adapter's). */
  shardedSubscribers?: boolean;
  /**
   * A connection that only subscribes: no ready check. The check's INFO is refused once a SUBSCRIBE
   * written while the connection was still starting (pub/sub commands are allowed then) has made it a
   * subscriber, and pub/sub needs no loaded dataset anyway.
   */
  subscriber?: boolean;
};

/**
 * Redis connections. BullMQ and blocking commands need their own connection with
 * `maxRetriesPerRequest: null`; request paths use a connection that fails fast instead.
 */
export function createRedis(url: string, name: string, opts: RedisConnectionOptions = {}): RedisClient {
  const { shardedSubscribers, subscriber, ...options }: RedisConnectionOptions = {
    connectionName: `consult:${name}`,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 2,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...opts,
  };
  if (subscriber) options.enableReadyCheck = false;
  const target = parseRedisUrl(url);
  if (target.kind === 'single') return new Redis(url, options);
  const { retryStrategy, enableAutoPipelining, enableOfflineQueue, ...perNode } = options;
  return new Cluster(target.nodes, {
    clusterRetryStrategy: retryStrategy,
    enableAutoPipelining,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    shardedSubscribers: shardedSubscribers ?? false,
    redisOptions: {
      ...perNode,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
  });
}

/**
 * A further connection to the same Redis as `client` (single server or cluster), e.g. for a
 * subscriber or a blocking reader; the caller closes it.
 */
export function duplicateRedis(client: RedisClient, opts: RedisConnectionOptions = {}): RedisClient {
  const { subscriber, ...given } = opts;
  const options: RedisOptions & { shardedSubscribers?: boolean } = subscriber
    ? { ...given, enableReadyCheck: false }
    : given;
  if (!(client instanceof Cluster)) return client.duplicate(options);
  const { retryStrategy, enableAutoPipelining, enableOfflineQueue, shardedSubscribers, ...perNode } = options;
  return client.duplicate(undefined, {
    ...(retryStrategy ? { clusterRetryStrategy: retryStrategy } : {}),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(shardedSubscribers === undefined ? {} : { shardedSubscribers }),
    redisOptions: { ...client.options.redisOptions, ...perNode },
  });
}

/**
 * Every master of the cluster (the one server otherwise), for commands that act on one node's
 * keyspace only: SCAN, KEYS, DBSIZE, FLUSHDB.
 */
export function primaries(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}
