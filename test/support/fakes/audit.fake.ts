import { randomUUID } from 'node:crypto';
import type {
  AuditCheckpointRecord,
  AuditEntry,
  AuditFilter,
  AuditRecord,
  AuditRepository,
} from '../../../src/data/repositories/audit.repository.js';
import { GENESIS_HASH, sealEntry } from '../../../src/data/audit-chain.js';
import { copy, type FakeTenantDb } from './memory-db.js';
import type { PublicPart } from './port.js';

/** The trails of a fake server: per tenant, its chain and its checkpoints. */
const trails = new WeakMap<FakeTenantDb, { entries: AuditRecord[]; checkpoints: Map<number, AuditCheckpointRecord> }>();

/**
 * The tenant's hash-chained audit trail on a fake tenant database (src/data/repositories/audit.repository.ts):
 * each append is sealed at the head with the product's own sealing (src/data/audit-chain.ts), so the
 * chain verifies as a stored one does; appends are sequential here (one process, no lost positions).
 */
export class FakeAuditRepository implements PublicPart<AuditRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get trail() {
    let t = trails.get(this.db);
    if (!t) trails.set(this.db, (t = { entries: [], checkpoints: new Map() }));
    return t;
  }

  async append(facts: AuditEntry, createdAt = new Date()): Promise<AuditRecord> {
    const head = this.trail.entries.at(-1) ?? { seq: 0, hash: GENESIS_HASH };
    const entry = sealEntry(this.db.tenant, facts, { seq: head.seq + 1, prev: head.hash, id: randomUUID(), createdAt });
    this.trail.entries.push(entry);
    return copy(entry);
  }

  async head(): Promise<AuditRecord | null> {
    const e = this.trail.entries.at(-1);
    return e ? copy(e) : null;
  }

  async at(seq: number): Promise<AuditRecord | null> {
    const e = this.trail.entries[seq - 1];
    return e ? copy(e) : null;
  }

  async range(afterSeq: number, limit: number): Promise<AuditRecord[]> {
    return this.trail.entries.slice(Math.max(afterSeq, 0), Math.max(afterSeq, 0) + limit).map(copy);
  }

  async list(filter: AuditFilter, limit = 50): Promise<AuditRecord[]> {
    return this.trail.entries
      .filter(
        (e) =>
          (['action', 'actorId', 'subjectId', 'eventId'] as const).every((k) => !filter[k] || e[k] === filter[k]) &&
          (!filter.from || e.createdAt >= filter.from) &&
          (!filter.to || e.createdAt < filter.to) &&
          (filter.beforeSeq === undefined || e.seq < filter.beforeSeq),
      )
      .reverse()
      .slice(0, Math.max(1, Math.min(limit, 500)))
      .map(copy);
  }

  async putCheckpoint(c: AuditCheckpointRecord): Promise<AuditCheckpointRecord> {
    this.trail.checkpoints.set(c.seq, copy(c));
    return c;
  }

  private sortedCheckpoints(): AuditCheckpointRecord[] {
    return [...this.trail.checkpoints.values()].sort((a, b) => a.seq - b.seq);
  }

  async checkpointsAfter(afterSeq: number, limit: number): Promise<AuditCheckpointRecord[]> {
    return this.sortedCheckpoints()
      .filter((c) => c.seq > afterSeq)
      .slice(0, limit)
      .map(copy);
  }

  async checkpointAt(seq: number): Promise<AuditCheckpointRecord | null> {
    const c = this.trail.checkpoints.get(seq);
    return c ? copy(c) : null;
  }

  async checkpoints(limit: number): Promise<AuditCheckpointRecord[]> {
    return this.sortedCheckpoints()
      .reverse()
      .slice(0, Math.max(1, Math.min(limit, 500)))
      .map(copy);
  }
}
