import type { Logger } from '../observability/logger.js';
import { SpanKind, startSpan } from '../observability/tracing.js';
import { isPushName, type PushName, type PushPayload, type PushPublisher, type RoomMove } from '../realtime/pushes.js';
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
 * node delivers them to its own sockets. Only the pushed-message names of the typed map pass.
 */
export class SocketIoHubPublisher implements PushPublisher {
  constructor(
    private readonly io: HubServer,
    private readonly logger: Logger,
  ) {}

  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>): void {
    // The type allows only known names; a name from outside the type system (a cast) is still refused here.
    if (!isPushName(event)) {
      this.logger.warn({ component: 'hub', event }, 'push with an unknown event name dropped');
      return;
    }
    const list = Array.isArray(rooms) ? rooms : [rooms];
    if (!list.length) return;
    const span = startSpan(`hub push ${event}`, { kind: SpanKind.PRODUCER, onlyWithParent: true });
    span.run(() => send(this.io.to(list), event, payload));
    span.end();
  }

  /** Room moves go through the adapter too, so sockets on every hub node join or leave. */
  move(rooms: string | string[], change: RoomMove): void {
    const list = Array.isArray(rooms) ? rooms : [rooms];
    if (!list.length) return;
    this.apply(this.io.in(list), change);
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
  emitLocal(rooms: string[], event: PushName, payload: unknown): void {
    if (!isPushName(event) || !rooms.length) return;
    send(this.io.local.to(rooms), event, payload);
  }
}
