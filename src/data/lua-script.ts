import { createHash } from 'node:crypto';
import type { RedisClient } from './redis.js';

/**
 * A Lua script run by EVALSHA, loaded on first use (and again after a Redis restart or on a cluster node
 * that has not seen it: NOSCRIPT falls back to EVAL, which loads it). A script is sent once per server,
 * not with every call: the push history's append, run once per recipient of every recoverable push, is
 * 2 KB of text.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run<T>(redis: RedisClient, keys: string[], args: (string | number)[]): Promise<T> {
    return this.eval(redis, keys.length, ...keys, ...args) as Promise<T>;
  }

  /** As `redis.eval(source, numKeys, ...keysThenArgs)`. */
  async eval(redis: RedisClient, numKeys: number, ...keysThenArgs: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, numKeys, ...keysThenArgs);
    } catch (e) {
      if (!String((e as Error).message).includes('NOSCRIPT')) throw e;
      return await redis.eval(this.source, numKeys, ...keysThenArgs);
    }
  }
}
