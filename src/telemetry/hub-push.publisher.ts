import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { HubPublisher } from '../actors/runtime/types.js';

/** The message on the hub push channel (redis-keys `hubPush`). */
export interface HubPushMessage {
  rooms: string[];
  event: string;
  payload: unknown;
}

/**
 * A HubPublisher for processes that run no Socket.IO server (the workers role): it publishes
 * `{ rooms, event, payload }` on one Redis channel, and every hub node relays it to its local
 * sockets in those rooms. At-most-once, like every push; acknowledged work never relies on it.
 */
export class RedisChannelHubPublisher implements HubPublisher {
  constructor(private readonly redis: Redis, private readonly channel: string, private readonly logger: Logger) {}

  emit(rooms: string | string[], event: string, payload: unknown): void {
    const msg: HubPushMessage = { rooms: Array.isArray(rooms) ? rooms : [rooms], event, payload };
    this.redis.publish(this.channel, JSON.stringify(msg)).catch((err: Error) => {
      this.logger.warn({ component: 'hub-push', event, err: err.message }, 'hub push not published');
    });
  }
}
