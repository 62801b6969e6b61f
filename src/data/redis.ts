import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections. BullMQ and blocking commands need their own connection with
 * `maxRetriesPerRequest: null`; request paths use a connection that fails fast instead.
 */
export function createRedis(url: string, name: string, opts: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectionName: `consult:${name}`,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 2,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...opts,
  });
}
