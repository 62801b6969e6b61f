import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../../observability/logger.js';
import type { HubPublisher } from './types.js';

const PushSchema = z.object({ rooms: z.array(z.string()), event: z.string().min(1), payload: z.unknown() });
export type HubPush = z.infer<typeof PushSchema>;

/**
 * The default publisher while no hub is attached to the system: pushes go to a Redis channel that any
 * hub node may relay with `subscribeHubPushes`. Pushes are at-most-once by nature, so pub/sub fits here
 * (unlike acknowledged actor messages).
 */
export class RedisHubPublisher implements HubPublisher {
  constructor(private readonly redis: Redis, private readonly channel: string, private readonly logger: Logger) {}

  emit(rooms: string | string[], event: string, payload: unknown): void {
    const push: HubPush = { rooms: Array.isArray(rooms) ? rooms : [rooms], event, payload };
    this.redis.publish(this.channel, JSON.stringify(push)).catch((err) =>
      this.logger.warn({ component: 'actors', err: (err as Error).message, event }, 'hub push not published'),
    );
  }
}

/**
 * Relays pushes published by RedisHubPublisher to `deliver` (e.g. `io.to(rooms).emit(event, payload)`).
 * `subscriber` must be a connection dedicated to subscriptions. Returns an unsubscribe function.
 */
export async function subscribeHubPushes(subscriber: Redis, channel: string, deliver: (push: HubPush) => void, onError: (err: unknown) => void = () => undefined): Promise<() => Promise<void>> {
  const onMessage = (ch: string, raw: string) => {
    if (ch !== channel) return;
    let parsed: ReturnType<typeof PushSchema.safeParse>;
    try {
      parsed = PushSchema.safeParse(JSON.parse(raw));
    } catch {
      return;
    }
    if (!parsed.success) return;
    // Thrown inside ioredis's message event it would escape to the process.
    try {
      deliver(parsed.data);
    } catch (err) {
      onError(err);
    }
  };
  subscriber.on('message', onMessage);
  await subscriber.subscribe(channel);
  return async () => {
    subscriber.off('message', onMessage);
    await subscriber.unsubscribe(channel);
  };
}
