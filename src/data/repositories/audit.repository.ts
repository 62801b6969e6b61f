import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { TenantDb } from '../mongo.js';
import { GENESIS_HASH, sealEntry, type AuditFacts, type ChainedEntry } from '../audit-chain.js';
import { isDuplicateKeyOnly } from './duplicate-keys.js';
import { AuditHeads, type PendingAppend } from './audit-heads.js';
import { AppError, toAppError } from '../../kernel/errors.js';

export { AuditHeads } from './audit-heads.js';
export type AuditEntry = AuditFacts;
export type AuditRecord = ChainedEntry;

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

/** Lost positions a batch tolerates without storing an entry (each is another writer's success). */
const MAX_CONFLICTS = 200;

type StoredEntry = Omit<ChainedEntry, 'seq'> & { _id: number };

/**
 * The tenant's hash-chained audit trail (decision 880). An append inserts the next position with
 * `_id = seq`; a writer that lost the position to another (duplicate key) reads the new head and
 * tries the next one. The appends a process makes while its previous insert is in flight go together
 * in one ordered insert (decision 1107). Nothing updates or deletes an entry.
 */
export class AuditRepository {
  constructor(
    private readonly db: TenantDb,
    private readonly heads: AuditHeads = new AuditHeads(),
  ) {}

  private get col() {
    return this.db.models.Audit.collection;
  }

  /**
   * Appends at the chain's head and resolves once the entry is stored; `createdAt` only for entries
   * carried over from before the chain.
   */
  append(facts: AuditEntry, createdAt = new Date()): Promise<AuditRecord> {
    return new Promise((resolve, reject) =>
      this.heads.submit(this.db.tenant, { facts, createdAt, id: randomUUID(), resolve, reject }, (batch) =>
        this.write(batch),
      ),
    );
  }

  /**
   * Seals a batch at the head, in its order, and stores it with one ordered insert, settling every
   * append: resolved once its entry is stored, never before. An ordered insert stores a prefix of the
   * batch and stops at its first refusal (MongoDB semantics), and each entry links to the one before it
   * in the batch, so what is stored is always a chain. After a refusal the positions tried are read
   * back, and the entries found there with their own ids are stored (a driver retry after a lost reply
   * included). The rest go on: a lost position (another writer's entry) from the new head; an entry the
   * database refused alone is rejected alone; any other failure rejects the rest with a coded error
   * (their entries may be stored without an answer, never answered without being stored).
   */
  private async write(batch: PendingAppend[]): Promise<void> {
    const tenant = this.db.tenant;
    let rest = batch;
    let conflicts = 0;
    let alone = false;
    try {
      let head: { seq: number; hash: string } | null = this.heads.get(tenant) ?? (await this.head());
      while (rest.length) {
        const tried = alone ? rest.slice(0, 1) : rest;
        alone = false;
        const entries = sealAt(tenant, head, tried);
        let failure: unknown;
        let stored = entries.length;
        try {
          await this.col.insertMany(entries.map(toStored) as never[], { ordered: true });
        } catch (e) {
          // Neither a lost position nor a refused entry (the database unreachable, the write not durable,
          // anything unknown): the rest of the batch fails, whatever part of it was stored.
          if (hasWriteConcernError(e) || !(isDuplicateKeyOnly(e) || refusedDocument(e))) throw e;
          failure = e;
          stored = await this.storedPrefix(entries);
        }
        for (let i = 0; i < stored; i++) rest[i]!.resolve(entries[i]!);
        if (stored) {
          head = entries[stored - 1]!;
          this.heads.set(tenant, head);
          conflicts = 0;
        }
        rest = rest.slice(stored);
        if (failure === undefined || !rest.length) continue;
        if (isDuplicateKeyOnly(failure)) {
          if (++conflicts >= MAX_CONFLICTS) throw new AppError('audit_busy', 'The audit trail is too busy; try again');
          if (conflicts > 2) await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** conflicts, 50)));
          head = await this.headFrom(entries[stored]!.seq);
          continue;
        }
        // An entry the database will not store fails alone, the others go on; in a batch, the next insert
        // tries the first entry not stored alone, to find the one refused.
        if (tried.length === 1) rest.shift()!.reject(toAppError(failure));
        else alone = true;
      }
    } catch (e) {
      this.heads.forget(tenant);
      const coded =
        e instanceof AppError
          ? e
          : new AppError('service_unavailable', 'The audit trail could not record the action; try again', {
              cause: e,
              retryAfter: 5,
            });
      for (const a of rest) a.reject(coded);
    }
  }

  /**
   * How many of `entries` (consecutive positions) are stored with their own ids, from the first on: one
   * read of their positions by `_id` (a range on `_id` scans the whole trail on mongo-java-server).
   */
  private async storedPrefix(entries: ChainedEntry[]): Promise<number> {
    const docs = await this.col
      .find({ _id: { $in: entries.map((e) => e.seq) } } as never, { projection: { id: 1 } })
      .toArray();
    const ids = new Map(docs.map((d) => [d._id as unknown as number, d.id as string]));
    let n = 0;
    while (n < entries.length && ids.get(entries[n]!.seq) === entries[n]!.id) n++;
    return n;
  }

  /**
   * The head after another writer took position `taken`, found by reads of positions by `_id` alone,
   * which every server answers from the primary index (a sort by `_id` makes mongo-java-server read and
   * sort the whole trail, holding the collection while every append waits). The positions taken + 1,
   * + 2, + 4 ... in one read, then at most PROBES positions between the highest taken and the lowest
   * free found, until they are adjacent: appends only add positions and every entry was written after the
   * one before it, so any taken position ends a chain, and the one before the first free one is the head.
   */
  private async headFrom(taken: number): Promise<{ seq: number; hash: string } | null> {
    let low = { seq: taken, hash: '' };
    let free = Number.POSITIVE_INFINITY;
    let probes = [taken, ...Array.from({ length: 31 }, (_, k) => taken + 2 ** k)];
    for (;;) {
      const docs = await this.col.find({ _id: { $in: probes } } as never, { projection: { hash: 1 } }).toArray();
      const found = new Map(docs.map((d) => [d._id as unknown as number, d.hash as string]));
      for (const p of probes) if (found.has(p) && p >= low.seq) low = { seq: p, hash: found.get(p)! };
      // The position it lost is free again (the trail was cut under it): read the head by sorting.
      if (!low.hash) return this.head();
      for (const p of probes) if (!found.has(p) && p > low.seq && p < free) free = p;
      if (free === low.seq + 1) return low;
      if (free === Number.POSITIVE_INFINITY) return this.head();
      probes = between(low.seq, free);
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

/** Positions a read probes at most while it narrows down the head (headFrom). */
const PROBES = 64;

/** At most PROBES positions strictly between `low` and `high`, spread evenly (all of them when they fit). */
function between(low: number, high: number): number[] {
  const gap = high - low;
  if (gap - 1 <= PROBES) return Array.from({ length: gap - 1 }, (_, k) => low + 1 + k);
  return Array.from({ length: PROBES }, (_, k) => low + Math.floor(((k + 1) * gap) / (PROBES + 1)));
}

/** The appends sealed one after the other from `head`: each links to the one before it. */
function sealAt(tenant: string, head: { seq: number; hash: string } | null, batch: PendingAppend[]): ChainedEntry[] {
  let at = head ?? { seq: 0, hash: GENESIS_HASH };
  return batch.map((a) => {
    const entry = sealEntry(tenant, a.facts, { seq: at.seq + 1, prev: at.hash, id: a.id, createdAt: a.createdAt });
    at = entry;
    return entry;
  });
}

/** Errors of the driver's encoding of a document (over the size limit: refused, or past its buffer). */
const UNSENDABLE = new Set(['MongoInvalidArgumentError', 'BSONError', 'RangeError']);

/**
 * A document refused for itself, so that the same entry would be refused again and the others of its
 * batch not: a write error other than a duplicate key, or a document the driver will not send (larger
 * than the server's limit), which fails the whole insert before it is sent, without naming the document.
 */
function refusedDocument(e: unknown): boolean {
  const err = e as { name?: string; writeErrors?: unknown } | undefined;
  if (UNSENDABLE.has(err?.name ?? '')) return true;
  const list = Array.isArray(err?.writeErrors) ? err.writeErrors : err?.writeErrors ? [err.writeErrors] : [];
  return list.some((w: { code?: number; err?: { code?: number } }) => (w.code ?? w.err?.code) !== 11000);
}

/** The insert was applied but not acknowledged at the write concern: not durable, so not answered as stored. */
function hasWriteConcernError(e: unknown): boolean {
  const err = e as { writeConcernErrors?: unknown[]; writeConcernError?: unknown } | undefined;
  return !!(err?.writeConcernErrors?.length || err?.writeConcernError);
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
