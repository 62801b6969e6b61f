import type { AuditFacts, ChainedEntry } from '../audit-chain.js';
import { SequenceHeads } from './sequence-heads.js';

/** One append waiting for its place in a tenant's chain, and whoever waits for its entry. */
export interface PendingAppend {
  facts: AuditFacts;
  createdAt: Date;
  /** Kept across attempts: an entry stored behind a lost reply is recognised as this one by it. */
  id: string;
  resolve(entry: ChainedEntry): void;
  reject(error: unknown): void;
}

/** Writes a batch in its order and settles every append of it (never throws). */
export type BatchWriter = (batch: PendingAppend[]) => Promise<void>;

/** Entries one insert carries at most: the rest wait for the next one. */
export const MAX_BATCH = 500;

/**
 * The last entry a process saw of each tenant's chain, and its appends to each chain as a group commit
 * (decision 1107): while one insert of a chain is in flight, the appends made meanwhile wait together
 * and go in the next insert, in the order they were made, as one ordered `insertMany`. A lone append is
 * written at once (nothing waits for a batch to fill); a burst (a node's clients all joining their
 * meetings again) costs one insert per batch instead of one per entry. Writers in other processes still
 * race for positions, and the position's unique key settles it (decision 880).
 */
export class AuditHeads extends SequenceHeads<{ seq: number; hash: string }> {
  private readonly waiting = new Map<string, PendingAppend[]>();

  constructor(private readonly maxBatch = MAX_BATCH) {
    super();
  }

  /** Queues an append behind the tenant's earlier ones; `write` takes the batch it lands in. */
  submit(tenant: string, append: PendingAppend, write: BatchWriter): void {
    const queue = this.waiting.get(tenant);
    if (queue) {
      queue.push(append);
      return;
    }
    const fresh = [append];
    this.waiting.set(tenant, fresh);
    void this.drain(tenant, fresh, write);
  }

  private async drain(tenant: string, queue: PendingAppend[], write: BatchWriter): Promise<void> {
    try {
      while (queue.length) {
        const batch = queue.splice(0, this.maxBatch);
        // The writer settles every append itself; this only keeps a defect from leaving one unsettled.
        await write(batch).catch((e: unknown) => batch.forEach((a) => a.reject(e)));
      }
    } finally {
      this.waiting.delete(tenant);
    }
  }
}
