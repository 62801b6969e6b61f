import type { Logger } from '../observability/logger.js';
import { SpanKind, startSpan } from '../observability/tracing.js';
import { isPushName, type PushName, type PushPayload } from '../contracts/pushes.js';
import type { PushOrigin, PushPublisher, RoomMove } from '../realtime/push-delivery.js';
import { OrderedPushes, type PushHistory } from '../realtime/push-history.js';
import type { ServerEventName, ServerToClientEvents } from './hub.events.js';
import type { HubServer } from './hub.types.js';

type Emitter = ReturnType<HubServer['to']>;

function send(target: Emitter, event: ServerEventName, payload: unknown): void {
  (target.emit as (ev: ServerEventName, p: Parameters<ServerToClientEvents[ServerEventName]>[0]) => boolean)(
    event,
    payload as never,
  );
}

/**
 * The hub's push publisher: actor pushes go to Socket.IO rooms through the Redis adapter, so every hub
 * node delivers them to its own sockets. Only the pushed-message names of the typed map pass. With a
 * history, recoverable pushes are recorded per recipient first and carry each recipient's position;
 * pushes and room moves leave in call order (src/realtime/push-history.ts).
 */
export class SocketIoHubPublisher implements PushPublisher {
  private readonly ordered = new OrderedPushes();

  constructor(
    private readonly io: HubServer,
    private readonly logger: Logger,
    private readonly history?: PushHistory,
  ) {}

  /** Resolves once every push and move submitted so far has left. */
  idle(): Promise<void> {
    return this.ordered.idle();
  }

  private failed = (err: unknown) =>
    this.logger.error({ component: 'hub', code: 'internal', err: (err as Error)?.message }, 'push not delivered');

  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>, origin?: PushOrigin): void {
    // The type allows only known names; a name from outside the type system (a cast) is still refused here.
    if (!isPushName(event)) {
      this.logger.warn({ component: 'hub', event }, 'push with an unknown event name dropped');
      return;
    }
    const list = Array.isArray(rooms) ? rooms : [rooms];
    if (!list.length) return;
    const span = startSpan(`hub push ${event}`, { kind: SpanKind.PRODUCER, onlyWithParent: true });
    const history = this.history;
    if (!history) {
      span.run(() => send(this.io.to(list), event, payload));
      span.end();
      return;
    }
    this.ordered.submit(
      () => history.plan(list, event, payload, origin),
      (deliveries) => {
        span.run(() => {
          for (const d of deliveries) send(this.io.to(d.rooms).except(d.except ?? []), event, d.payload);
        });
        span.end();
      },
      this.failed,
    );
  }

  /** Room moves go through the adapter too, so sockets on every hub node join or leave. */
  move(rooms: string | string[], change: RoomMove): void {
    const list = Array.isArray(rooms) ? rooms : [rooms];
    if (!list.length) return;
    const history = this.history;
    if (!history) return this.apply(this.io.in(list), change);
    this.ordered.submit(
      () => history.move(list, change),
      () => this.apply(this.io.in(list), change),
      this.failed,
    );
  }

  /** A room move relayed from the Redis push channel, applied to this node's sockets only. */
  moveLocal(rooms: string[], change: RoomMove): void {
    if (rooms.length) this.apply(this.io.local.in(rooms), change);
  }

  private apply(target: ReturnType<HubServer['in']>, change: RoomMove): void {
    if (change.join?.length) target.socketsJoin(change.join);
    if (change.leave?.length) target.socketsLeave(change.leave);
  }

  /** Delivers a push relayed from the Redis push channel to this node's sockets only (every hub node relays it). */
  emitLocal(rooms: string[], event: PushName, payload: unknown, except: string[] = []): void {
    if (!isPushName(event) || !rooms.length) return;
    send(this.io.local.to(rooms).except(except), event, payload);
  }
}
