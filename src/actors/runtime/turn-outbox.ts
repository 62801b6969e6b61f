import type { Logger } from '../../observability/logger.js';
import type { PushPublisher } from '../../realtime/push-delivery.js';
import type { SnapshotStore } from './snapshot-store.js';
import { sendPushes, type Push, type TurnMark } from './turn-context.js';

/** What sending and forgetting an actor's saved pushes needs of the system that hosts it. */
export interface OutboxHost {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  publisher(): PushPublisher;
}

let outboxEntries = 0;

/**
 * What a turn writes to its actor's outbox: its pushes (JSON) behind a mark no other turn's entry has
 * (the shard's epoch names the owner's tenure, the counter the turn in this process), so the entry is
 * deleted once sent only if it is still this turn's, whoever holds the shard by then. The mark grows from
 * turn to turn of an actor (a later owner has a higher epoch): the histories record each push once by it
 * (decision 1133).
 */
export function outboxEntry(epoch: number, pushes: string | undefined): string | undefined {
  return pushes === undefined ? undefined : `#${epoch}.${++outboxEntries}#${pushes}`;
}

/** The pushes (JSON) of an outbox entry (an entry of an older version has no mark). */
export function outboxPushes(entry: string): string {
  return entry.startsWith('#') ? entry.slice(entry.indexOf('#', 1) + 1) : entry;
}

/** The origin of an outbox entry's pushes, actor `source` (none for an entry of an older version, without a mark). */
export function outboxMark(source: string, entry: string): TurnMark | undefined {
  const m = /^#(\d+)\.(\d+)#/.exec(entry);
  return m ? { source, epoch: Number(m[1]), turn: Number(m[2]) } : undefined;
}

/**
 * The pushes of a turn that was saved and never sent (its node died between the two, decision 1129):
 * sent before any turn of the actor's new activation, in their order, then forgotten. A node that died
 * after sending them but before forgetting them makes them arrive twice (each with its own position).
 */
export async function sendUnsent(host: OutboxHost, shard: number, actor: string, unsent: string): Promise<void> {
  const pushes = JSON.parse(outboxPushes(unsent)) as Push[];
  const publisher = host.publisher();
  sendPushes(publisher, pushes, outboxMark(actor, unsent));
  await publisher.idle?.();
  await host.store.sent(shard, actor, unsent);
  host.logger.info({ component: 'actors', actor, pushes: pushes.length }, "a saved turn's unsent pushes sent");
}

/** A turn's pushes were sent: its outbox entry goes (not awaited: the next write on this connection follows it). */
export function forgetSent(host: OutboxHost, shard: number, actor: string, written: string): void {
  host.store
    .sent(shard, actor, written)
    .catch((err: unknown) =>
      host.logger.debug(
        { component: 'actors', actor, err: (err as Error).message },
        'outbox not cleared: the next activation sends its pushes again',
      ),
    );
}
