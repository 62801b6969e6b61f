import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { TenantDb } from '../mongo.js';
import { sealEntry, type AuditFacts, type ChainedEntry } from '../audit-chain.js';
import { isDuplicateKey } from './duplicate-keys.js';
import { SequenceHeads } from './sequence-heads.js';
import { AppError } from '../../core/errors.js';

export type AuditEntry = AuditFacts;
export type AuditRecord = ChainedEntry;

/**
 * The last entry a process saw of each tenant's chain and its queue of appends per tenant: a process
 * appends one entry at a time to a chain, so a burst (a node's sockets all leaving at once) costs one
 * insert per entry instead of every writer racing for each position (quadratic inserts, and
 * `audit_busy` once a writer loses too often). Writers in other processes still race, and the
 * position's unique key settles it.
 */
export class AuditHeads extends SequenceHeads<{ seq: number; hash: string }> {}

/** Filter of a trail read; every field narrows. */
export interface AuditFilter {
  action?: string;
  actorId?: string;
  subjectId?: string;
  eventId?: string;
  from?: Date;
  to?: Date;
  /** Entries before this position (paging newest first). */
  beforeSeq?: number;
}

export interface AuditCheckpointRecord {
  seq: number;
  hash: string;
  createdAt: Date;
  kid: string;
  jws: string;
  jwk: JWK;
}

/** Conflicts one append tolerates before it reports the trail as busy (each conflict is another writer's success). */
const MAX_ATTEMPTS = 200;

type StoredEntry = Omit<ChainedEntry, 'seq'> & { _id: number };

/**
 * The tenant's hash-chained audit trail (decision 880). An append inserts the next position with
 * `_id = seq`; a writer that lost the position to another (duplicate key) reads the new head and
 * tries the next one. Nothing updates or deletes an entry.
 */
export class AuditRepository {
  constructor(
    private readonly db: TenantDb,
    private readonly heads: AuditHeads = new AuditHeads(),
  ) {}

  private get col() {
    return this.db.models.Audit.collection;
  }

  /** Appends at the chain's head; `createdAt` only for entries carried over from before the chain. */
  append(facts: AuditEntry, createdAt = new Date()): Promise<AuditRecord> {
    return this.heads.inTurn(this.db.tenant, () => this.appendAtHead(facts, createdAt));
  }

  private async appendAtHead(facts: AuditEntry, createdAt: Date): Promise<AuditRecord> {
    const tenant = this.db.tenant;
    const id = randomUUID();
    let head = this.heads.get(tenant) ?? (await this.head());
    for (let attempt = 1; ; attempt++) {
      const entry = sealEntry(tenant, facts, {
        seq: (head?.seq ?? 0) + 1,
        prev: head?.hash ?? '0'.repeat(64),
        id,
        createdAt,
      });
      try {
        await this.col.insertOne(toStored(entry) as never);
        this.heads.set(tenant, entry);
        return entry;
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
      }
      const taken = await this.at(entry.seq);
      if (taken?.id === id) return taken; // our own insert, retried by the driver after a lost reply
      head = await this.head();
      if (attempt >= MAX_ATTEMPTS) throw new AppError('audit_busy', 'The audit trail is too busy; try again');
      if (attempt > 2) await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** attempt, 50)));
    }
  }

  /** The last entry of the chain, or null for an empty trail. */
  async head(): Promise<AuditRecord | null> {
    const doc = await this.col.find({}).sort({ _id: -1 }).limit(1).next();
    return doc ? fromStored(doc as unknown as StoredEntry) : null;
  }

  async at(seq: number): Promise<AuditRecord | null> {
    const doc = await this.col.findOne({ _id: seq } as never);
    return doc ? fromStored(doc as unknown as StoredEntry) : null;
  }

  /** Entries after `afterSeq` in chain order, `limit` at a time (verification and export). */
  async range(afterSeq: number, limit: number): Promise<AuditRecord[]> {
    const docs = await this.col
      .find({ _id: { $gt: afterSeq } } as never)
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => fromStored(d as unknown as StoredEntry));
  }

  /** Newest first, filtered; `limit` is capped at 500. */
  async list(filter: AuditFilter, limit = 50): Promise<AuditRecord[]> {
    const q: Record<string, unknown> = {};
    for (const k of ['action', 'actorId', 'subjectId', 'eventId'] as const) if (filter[k]) q[k] = filter[k];
    if (filter.from || filter.to)
      q.createdAt = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lt: filter.to } : {}) };
    if (filter.beforeSeq !== undefined) q._id = { $lt: filter.beforeSeq };
    const docs = await this.col
      .find(q as never)
      .sort({ _id: -1 })
      .limit(Math.max(1, Math.min(limit, 500)))
      .toArray();
    return docs.map((d) => fromStored(d as unknown as StoredEntry));
  }

  /**
   * Stores the checkpoint the service just signed (it holds the anchor, decision 1020), replacing any
   * document at that position: one the service did not sign there is not kept.
   */
  async putCheckpoint(c: AuditCheckpointRecord): Promise<AuditCheckpointRecord> {
    const { seq, ...rest } = c;
    await this.db.models.AuditCheckpoint.collection.replaceOne({ _id: seq } as never, rest as never, { upsert: true });
    return c;
  }

  /** Checkpoints after `afterSeq` in chain order, `limit` at a time. */
  async checkpointsAfter(afterSeq: number, limit: number): Promise<AuditCheckpointRecord[]> {
    const docs = await this.db.models.AuditCheckpoint.collection
      .find({ _id: { $gt: afterSeq } } as never)
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(checkpointFrom);
  }

  async checkpointAt(seq: number): Promise<AuditCheckpointRecord | null> {
    const d = await this.db.models.AuditCheckpoint.collection.findOne({ _id: seq } as never);
    return d ? checkpointFrom(d) : null;
  }

  /** Checkpoints newest first. */
  async checkpoints(limit: number): Promise<AuditCheckpointRecord[]> {
    const docs = await this.db.models.AuditCheckpoint.collection
      .find({})
      .sort({ _id: -1 })
      .limit(Math.max(1, Math.min(limit, 500)))
      .toArray();
    return docs.map(checkpointFrom);
  }
}

function checkpointFrom(d: Record<string, unknown>): AuditCheckpointRecord {
  return {
    seq: d._id as number,
    hash: d.hash as string,
    createdAt: d.createdAt as Date,
    kid: d.kid as string,
    jws: d.jws as string,
    jwk: d.jwk as JWK,
  };
}

function toStored(e: ChainedEntry): StoredEntry {
  const { seq, ...rest } = e;
  return { _id: seq, ...rest };
}

function fromStored(d: StoredEntry): AuditRecord {
  const { _id, ...rest } = d;
  const out = { seq: _id, ...rest } as AuditRecord;
  for (const k of ['actorId', 'subjectId', 'eventId', 'ip', 'details'] as const)
    if (out[k] === undefined || out[k] === null) delete out[k];
  return out;
}
