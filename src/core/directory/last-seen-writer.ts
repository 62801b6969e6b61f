import { Types } from 'mongoose';
import type { Logger } from '../../observability/logger.js';
import { isObjectIdString } from '../../kernel/object-id.js';

/** Where lastSeenAt is kept (the User document); a write only ever moves it forward. */
export interface LastSeenSink {
  touchLastSeenMany(tenant: string, entries: readonly { userId: Types.ObjectId; at: Date }[]): Promise<void>;
}

/**
 * Coalesces lastSeenAt updates in memory and writes them once per interval, one unordered bulk write
 * per tenant: connects and disconnects never wait for the database, and a user whose sockets come and
 * go within an interval costs one write. Readers see a value at most one interval old; a crashed node
 * loses at most one interval, and the sweep of its connections by another node touches those users again.
 */
export class LastSeenWriter {
  private pending = new Map<string, Map<string, Date>>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly sink: LastSeenSink,
    private readonly opts: { intervalMs: number; logger?: Logger },
  ) {}

  /** Notes that the user was seen at `at` (users without an id, such as guests, are ignored). */
  note(tenant: string, userId: string, at = new Date()): void {
    if (this.closed || !isObjectIdString(userId)) return;
    let users = this.pending.get(tenant);
    if (!users) this.pending.set(tenant, (users = new Map()));
    const prev = users.get(userId);
    if (!prev || prev < at) users.set(userId, at);
    this.timer ??= setTimeout(() => void this.flush(), this.opts.intervalMs).unref();
  }

  /** Writes what was noted and takes no more notes (the node is stopping; MongoDB closes next). */
  close(): Promise<void> {
    this.closed = true;
    return this.flush();
  }

  /**
   * Writes everything noted so far, after any earlier flush finished (one flush writes at a time, so a
   * node never has more than one bulk update in flight); resolves when stored or logged as failed.
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.flushing.then(async () => {
      for (const [tenant, users] of batch) {
        await this.sink
          .touchLastSeenMany(
            tenant,
            [...users].map(([id, at]) => ({ userId: new Types.ObjectId(id), at })),
          )
          .catch((err) => {
            this.opts.logger?.warn(
              { component: 'presence', tenant, users: users.size, err: (err as Error).message },
              'lastSeen update failed',
            );
          });
      }
    });
    return this.flushing;
  }
}
