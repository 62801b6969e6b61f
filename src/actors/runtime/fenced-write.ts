import { AppError } from '../../kernel/errors.js';

/** What a fenced write needs: the writer's epoch, a check of its lease, and where to count a rejection. */
export interface Fence {
  epoch: number;
  /** True while the writer's lease and epoch are still current in Redis. */
  isCurrent(): Promise<boolean>;
  onFenced(): void;
}

/**
 * Runs a durable write made on an actor's behalf outside the runtime (for example a MongoDB update),
 * so that a stale owner cannot overwrite a newer one. `write` receives the epoch and must apply only
 * when the stored epoch is not newer than it (see epochFilter/epochStamp), returning `false` when
 * nothing matched. A lease that is no longer current, or a `false`, counts as a fenced write and
 * throws `not_owner` (the turn then fails and nothing it queued is pushed).
 */
export async function fencedWrite<T>(fence: Fence, write: (epoch: number) => Promise<T | false>): Promise<T> {
  if (!(await fence.isCurrent())) {
    fence.onFenced();
    throw new AppError('not_owner', 'write fenced: the shard has a newer owner');
  }
  const result = await write(fence.epoch);
  if (result === false) {
    fence.onFenced();
    throw new AppError('not_owner', 'write fenced: the stored epoch is newer');
  }
  return result;
}

/**
 * MongoDB filter clause matching a document whose epoch is not newer than the writer's (or that has
 * none yet). Uses only $or/$lte/$exists, which FerretDB and MongoDB both support.
 */
export function epochFilter(epoch: number, field = 'actorEpoch'): Record<string, unknown> {
  return { $or: [{ [field]: { $lte: epoch } }, { [field]: { $exists: false } }] };
}

/** The `$set` part that stamps the writer's epoch on the document it changes. */
export function epochStamp(epoch: number, field = 'actorEpoch'): Record<string, number> {
  return { [field]: epoch };
}
