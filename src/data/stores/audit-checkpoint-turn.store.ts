import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';

/**
 * Whose turn it is to sign the audit checkpoints of the current period (decision 881): one Redis key
 * (redis-keys `auditCheckpointTurn`) holding the node id, set only if absent and kept for the period.
 */
export class AuditCheckpointTurnStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'auditCheckpointTurn'> }) {}

  /** Takes the turn for `nodeId` for `ttlMs` (SET NX PX); false when another node holds it. */
  async claim(nodeId: string, ttlMs: number): Promise<boolean> {
    return (await this.deps.redis.set(this.deps.keys.auditCheckpointTurn, nodeId, 'PX', ttlMs, 'NX')) === 'OK';
  }
}
