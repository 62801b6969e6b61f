import type { RedisClient } from '../../data/redis.js';
import type { ActorKeys } from './actor-keys.js';
import { HEARTBEAT } from './scripts.js';

/**
 * The hosting nodes, by heartbeat in a Redis sorted set scored with Redis server time, so a node that
 * dies silently drops out after `ttlMs` without any clock agreement between nodes.
 */
export class Membership {
  private live: string[] = [];
  private joined = false;

  constructor(private readonly deps: { redis: RedisClient; keys: ActorKeys; nodeId: string; ttlMs: number }) {}

  /** Last known live hosting nodes, sorted. */
  nodes(): readonly string[] {
    return this.live;
  }

  get isJoined(): boolean {
    return this.joined;
  }

  /** Heartbeats when joined (or just reads), and returns the live set. */
  async refresh(): Promise<readonly string[]> {
    return this.call(this.joined ? 'join' : 'peek');
  }

  async join(): Promise<readonly string[]> {
    this.joined = true;
    return this.call('join');
  }

  async leave(): Promise<void> {
    this.joined = false;
    await this.call('leave');
  }

  /** Takes another node out of the live set at once (found crashed, decision 1116); it may heartbeat back. */
  async evict(node: string): Promise<void> {
    await this.deps.redis.zrem(this.deps.keys.nodes, node);
  }

  private async call(mode: 'join' | 'leave' | 'peek'): Promise<readonly string[]> {
    const { redis, keys, nodeId, ttlMs } = this.deps;
    const nodes = await HEARTBEAT.run<string[]>(redis, [keys.nodes], [nodeId, ttlMs, mode]);
    this.live = [...nodes].sort();
    return this.live;
  }
}
