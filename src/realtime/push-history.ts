import { randomBytes } from 'node:crypto';
import {
  PushHistoryStore,
  type HistoryRead,
  type PushHistoryLimits,
  type PushOrigin,
  type StreamPosition,
} from '../data/stores/push-history.store.js';
import type { Logger } from '../observability/logger.js';
import { isRecoverable, type RoomMove } from './push-delivery.js';
import type { PushName, PushPosition } from '../contracts/pushes.js';
import { roomTarget, streams } from './rooms.js';

/** One delivery of a push: to `rooms` except `except`, with this payload (a recipient's own position in it). */
export interface Delivery {
  rooms: string[];
  except?: string[];
  payload: unknown;
}

/** A plan whose Redis writes were issued in order; `ready` settles when they are done (never rejects). */
export interface Planned<T> {
  ready: Promise<T>;
}

/**
 * Recoverable pushes (PUSH_DELIVERY) recorded per recipient before they are delivered
 * (docs/hub.md#recovering-missed-pushes): a push to a user's or a device's room is appended to that
 * recipient's history; a push to a meeting room (or its headsets' room) to the history of every
 * recipient on the room's roster, the users and devices logically in the meeting whether their sockets
 * are connected or not. Each recipient's sockets then receive the push with their own position (`pos`);
 * sockets in the addressed rooms that are on no roster (none, unless the roster could not be written)
 * get it without one. Volatile pushes pass unchanged. When Redis refuses, the push still goes out,
 * without positions (at-most-once, as without a history), and the failure is logged.
 */
export class PushHistory {
  constructor(
    readonly store: PushHistoryStore,
    private readonly logger?: Logger,
  ) {}

  /**
   * Records a push (when recoverable) and answers its deliveries. A push sent again under its origin is
   * recorded once and delivered with the position it was given (a client drops a position it has); one
   * its origin has a later turn of, to no recipient it was recorded for (decision 1133).
   */
  async plan(rooms: string[], event: PushName, payload: unknown, origin?: PushOrigin): Promise<Planned<Delivery[]>> {
    const plain: Delivery[] = [{ rooms, payload }];
    if (!isRecoverable(event, payload) || !payload || typeof payload !== 'object')
      return { ready: Promise.resolve(plain) };
    try {
      const { byTenant, other } = targets(rooms);
      if (!byTenant.size) return { ready: Promise.resolve(plain) };
      const json = JSON.stringify(payload);
      // Issued now, in call order: a recipient's history holds the pushes in the order they are delivered.
      // One append per tenant (a push's recipients are of one tenant) carries every recipient, the
      // meeting rosters read by the same call where the server allows it.
      const issued = await Promise.all(
        [...byTenant].map(([tenant, t]) =>
          this.store.appendWithRosters(tenant, [...t.streams], t.rosters, event, json, origin).then(({ written }) => ({
            tenant,
            written,
          })),
        ),
      );
      const appends = issued.map(({ tenant, written }) =>
        written.then((list) =>
          list.flatMap(({ stream, position }) => {
            const room = streams.room(tenant, stream);
            return room ? [{ stream, room, p: position }] : [];
          }),
        ),
      );
      const ready = Promise.all(appends)
        .then((groups) => groups.flat())
        .then(
          (done) => {
            const out: Delivery[] = [];
            for (const r of done)
              if (r.p)
                out.push({
                  rooms: [r.room],
                  payload: { ...(payload as object), pos: { stream: r.stream, ...r.p } satisfies PushPosition },
                });
            // Sockets in a meeting room that are on no roster still get the push (without a position).
            if (other.length) out.push({ rooms: other, except: done.map((r) => r.room), payload });
            return out;
          },
          (err: unknown) => this.failed(err, event, plain),
        );
      return { ready };
    } catch (err) {
      return { ready: Promise.resolve(this.failed(err, event, plain)) };
    }
  }

  /** Keeps the meeting rosters in step with a room move (admission into, removal from, end of a meeting). */
  async move(rooms: string[], change: RoomMove): Promise<Planned<void>> {
    try {
      const join = (change.join ?? []).filter((r) => roster(r));
      const leave = (change.leave ?? []).filter((r) => roster(r));
      if (!join.length && !leave.length) return { ready: Promise.resolve() };
      const { recipients } = await this.expand(rooms);
      const ids = recipients.map((r) => r.stream);
      const writes = [
        ...join.map((r) => this.store.enroll(r, ids)),
        ...leave.map((r) => (rooms.includes(r) ? this.store.dropRoster(r) : this.store.unenroll(r, ids))),
      ];
      return {
        ready: Promise.all(writes).then(
          () => undefined,
          (err: unknown) => this.warn(err, 'roster not updated'),
        ),
      };
    } catch (err) {
      this.warn(err, 'roster not updated');
      return { ready: Promise.resolve() };
    }
  }

  /** A recipient's sockets entered meeting rooms (joinEvent, initEvent, a headset attached). */
  enroll(tenant: string, stream: string, rooms: string[]): Promise<void> {
    return Promise.all(rooms.filter((r) => roster(r)).map((r) => this.store.enroll(r, [stream]))).then(() => undefined);
  }

  /** Pushes of `stream` after `from`, or its current position (see PushHistoryStore.read). */
  read(tenant: string, stream: string, from?: StreamPosition, peek = false): Promise<HistoryRead> {
    return this.store.read(tenant, stream, from, peek);
  }

  /** The recipients (deduplicated) the rooms reach, and the rooms that address no recipient. */
  private async expand(rooms: string[]) {
    const seen = new Map<string, { tenant: string; stream: string; room: string }>();
    const other: string[] = [];
    const add = (tenant: string, stream: string) => {
      const room = streams.room(tenant, stream);
      if (room && !seen.has(`${tenant}|${stream}`)) seen.set(`${tenant}|${stream}`, { tenant, stream, room });
    };
    for (const room of rooms) {
      const t = roomTarget(room);
      if (!t) other.push(room);
      else if ('stream' in t) add(t.tenant, t.stream);
      else {
        // Sockets in the meeting room that are on no roster still get the push (without a position).
        other.push(room);
        for (const s of await this.store.roster(t.roster)) add(t.tenant, s);
      }
    }
    return { recipients: [...seen.values()], other };
  }

  private failed(err: unknown, event: string, plain: Delivery[]): Delivery[] {
    this.warn(err, 'push not recorded in the history', event);
    return plain;
  }

  private warn(err: unknown, msg: string, event?: string): void {
    this.logger?.warn(
      { component: 'realtime', code: 'service_unavailable', err: (err as Error)?.message, ...(event ? { event } : {}) },
      msg,
    );
  }
}

/**
 * What a push's rooms address, by tenant: the recipients' streams named by their rooms (each once) and the
 * meeting rosters; `other`, the rooms broadcast to as they are (every meeting room among them: see plan).
 */
function targets(rooms: string[]): {
  byTenant: Map<string, { streams: Set<string>; rosters: string[] }>;
  other: string[];
} {
  const byTenant = new Map<string, { streams: Set<string>; rosters: string[] }>();
  const other: string[] = [];
  for (const room of rooms) {
    const t = roomTarget(room);
    if (!t) {
      other.push(room);
      continue;
    }
    let entry = byTenant.get(t.tenant);
    if (!entry) byTenant.set(t.tenant, (entry = { streams: new Set(), rosters: [] }));
    if ('stream' in t) {
      if (streams.room(t.tenant, t.stream)) entry.streams.add(t.stream);
    } else {
      other.push(room);
      entry.rosters.push(t.roster);
    }
  }
  return { byTenant, other };
}

function roster(room: string): boolean {
  const t = roomTarget(room);
  return !!t && 'roster' in t;
}

/**
 * Runs push plans one after another in call order (each may read Redis, then issues its writes) and
 * delivers each plan's result in the same order once its writes are done: pushes keep their order, and
 * a push leaves only after it was recorded, without waiting for the writes of the pushes behind it.
 */
export class OrderedPushes {
  private planned: Promise<unknown> = Promise.resolve();
  private delivered: Promise<unknown> = Promise.resolve();

  submit<T>(plan: () => Promise<Planned<T>>, deliver: (result: T) => void, onError: (err: unknown) => void): void {
    const step = this.planned.then(plan);
    this.planned = step.catch(() => undefined);
    this.delivered = this.delivered.then(async () => deliver(await (await step).ready)).catch(onError);
  }

  /** Resolves once everything submitted so far was delivered. */
  idle(): Promise<void> {
    return this.delivered.then(() => undefined);
  }
}

/**
 * Fresh epochs for new streams: this process's random prefix (6 bytes, made once) and a counter, so no two
 * epochs it makes are equal and two processes' coincide with the odds of two random 6-byte values. A
 * random draw per append (the epoch is an argument of every append, used only when the stream is new)
 * was a system call per recipient of every push.
 */
export function epochSource(prefix = randomBytes(6).toString('hex')): () => string {
  let n = 0;
  return () => `${prefix}${(n++).toString(36)}`;
}

/** The push history of a deployment: its store on the configured Redis, with the configured limits. */
export function pushHistoryFor(
  redis: ConstructorParameters<typeof PushHistoryStore>[0]['redis'],
  keys: ConstructorParameters<typeof PushHistoryStore>[0]['keys'],
  limits: PushHistoryLimits,
  logger?: Logger,
): PushHistory {
  return new PushHistory(new PushHistoryStore({ redis, keys, limits, epoch: epochSource() }), logger);
}
