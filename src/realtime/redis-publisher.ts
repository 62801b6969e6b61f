import type { RedisClient } from '../data/redis.js';
import { z } from 'zod';
import type { Logger } from '../observability/logger.js';
import { injectTrace, SpanKind, startSpan, TraceCarrier } from '../observability/tracing.js';
import { OrderedPushes, pushHistoryFor, type PushHistory } from './push-history.js';
import { isPushName, type PushName, type PushPayload } from '../contracts/pushes.js';
import type { PushOrigin, PushPublisher, RoomMove } from './push-delivery.js';

const PushSchema = z.object({
  rooms: z.array(z.string()),
  except: z.array(z.string()).optional(),
  event: z.string().min(1),
  payload: z.unknown(),
  trace: TraceCarrier.optional(),
});

const MoveSchema = z.object({
  rooms: z.array(z.string()),
  move: z.object({ join: z.array(z.string()).optional(), leave: z.array(z.string()).optional() }),
});

/** A room move (PushPublisher.move) on the same channel: `{ rooms, move }`, so it keeps its order with pushes. */
export interface RelayedMove {
  rooms: string[];
  move: RoomMove;
}

/** A push as it travels on the Redis push channel (redis-keys `hubPush`): `{ rooms, event, payload }`. */
export interface RelayedPush {
  rooms: string[];
  /** Sockets in these rooms are left out (they got the push with their own position). */
  except?: string[];
  event: PushName;
  payload: unknown;
  /** The publisher's trace context (tracing on): each hub node's delivery is a span of that trace. */
  trace?: TraceCarrier;
}

/**
 * The publisher of processes that run no Socket.IO server, or before a hub is attached (actors-only
 * nodes, workers, telemetry ingest, sign-in services): it publishes on one Redis channel and every hub
 * node relays the push to its own sockets in those rooms (`subscribePushes`). At-most-once by nature,
 * so pub/sub fits here (unlike acknowledged actor messages).
 */
export class RedisPushPublisher implements PushPublisher {
  private readonly ordered = new OrderedPushes();

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
    private readonly logger?: Logger,
    /** With a history, recoverable pushes are recorded per recipient before they are published. */
    private readonly history?: PushHistory,
  ) {}

  /** Resolves once every push and move submitted so far was published. */
  idle(): Promise<void> {
    return this.ordered.idle();
  }

  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>, origin?: PushOrigin): void {
    const span = startSpan(`push ${event}`, { kind: SpanKind.PRODUCER, onlyWithParent: true });
    const trace = span.run(injectTrace);
    span.end();
    const list = Array.isArray(rooms) ? rooms : [rooms];
    const publish = (d: { rooms: string[]; except?: string[]; payload: unknown }) => {
      const push: RelayedPush = {
        rooms: d.rooms,
        ...(d.except?.length ? { except: d.except } : {}),
        event,
        payload: d.payload,
        ...(trace ? { trace } : {}),
      };
      this.redis
        .publish(this.channel, JSON.stringify(push))
        .catch((err: Error) =>
          this.logger?.warn({ component: 'realtime', err: err.message, event }, 'push not published'),
        );
    };
    const history = this.history;
    if (!history) return publish({ rooms: list, payload });
    this.ordered.submit(
      () => history.plan(list, event, payload, origin),
      (deliveries) => deliveries.forEach(publish),
      (err) => this.logger?.warn({ component: 'realtime', err: (err as Error)?.message, event }, 'push not published'),
    );
  }

  move(rooms: string | string[], change: RoomMove): void {
    const relayed: RelayedMove = { rooms: Array.isArray(rooms) ? rooms : [rooms], move: change };
    const publish = () =>
      this.redis
        .publish(this.channel, JSON.stringify(relayed))
        .catch((err: Error) =>
          this.logger?.warn({ component: 'realtime', err: err.message }, 'room move not published'),
        );
    const history = this.history;
    if (!history) return void publish();
    this.ordered.submit(
      () => history.move(relayed.rooms, change),
      () => void publish(),
      (err) => this.logger?.warn({ component: 'realtime', err: (err as Error)?.message }, 'room move not published'),
    );
  }
}

/**
 * Relays pushes published by RedisPushPublisher to `deliver` (e.g. `io.local.to(rooms).emit(event, payload)`).
 * `subscriber` must be a connection dedicated to subscriptions. Messages that are not JSON, not of the
 * push shape or name no known pushed message are dropped. Returns an unsubscribe function.
 */
export async function subscribePushes(
  subscriber: RedisClient,
  channel: string,
  deliver: (push: RelayedPush) => void,
  onError: (err: unknown) => void = () => undefined,
  deliverMove: (move: RelayedMove) => void = () => undefined,
): Promise<() => Promise<void>> {
  const onMessage = (ch: string, raw: string) => {
    if (ch !== channel) return;
    let parsed: ReturnType<typeof PushSchema.safeParse>;
    let move: ReturnType<typeof MoveSchema.safeParse>;
    try {
      const json: unknown = JSON.parse(raw);
      move = MoveSchema.safeParse(json);
      parsed = PushSchema.safeParse(json);
    } catch {
      return;
    }
    if (move.success) {
      // Thrown inside ioredis's message event it would escape to the process.
      try {
        deliverMove({ rooms: move.data.rooms, move: move.data.move });
      } catch (err) {
        onError(err);
      }
      return;
    }
    if (!parsed.success || !isPushName(parsed.data.event)) return;
    const { rooms, except, event, payload, trace } = parsed.data;
    const span = startSpan(`hub push ${event}`, { kind: SpanKind.CONSUMER, parent: trace, onlyWithParent: true });
    // Thrown inside ioredis's message event it would escape to the process.
    try {
      span.run(() => deliver({ rooms, ...(except ? { except } : {}), event, payload }));
      span.end();
    } catch (err) {
      span.end(err);
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

/**
 * The push publisher of a process without a hub of its own: the hub push channel, with recoverable pushes
 * recorded in the recipients' histories first (the configured limits, `HUB_PUSH_HISTORY_*`).
 */
export function historyPublisher(
  redis: RedisClient,
  keys: Parameters<typeof pushHistoryFor>[1] & { hubPush: string },
  limits: Parameters<typeof pushHistoryFor>[2],
  logger?: Logger,
): RedisPushPublisher {
  return new RedisPushPublisher(redis, keys.hubPush, logger, pushHistoryFor(redis, keys, limits, logger));
}
