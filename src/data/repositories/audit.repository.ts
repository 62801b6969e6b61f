import type { TenantDb } from '../mongo.js';

export interface AuditEntry {
  action: string;
  outcome: 'success' | 'failure';
  actorId?: string;
  subjectId?: string;
  ip?: string;
  details?: Record<string, unknown>;
}

export interface AuditRecord extends AuditEntry {
  createdAt: Date;
}

/** Append-only audit trail of a tenant. */
export class AuditRepository {
  constructor(private readonly db: TenantDb) {}

  async append(e: AuditEntry): Promise<void> {
    await this.db.models.Audit.create(e);
  }

  /** Latest entries first, optionally of one action or about one subject. */
  list(filter: { action?: string; subjectId?: string }, limit = 50): Promise<AuditRecord[]> {
    const q: Record<string, unknown> = {};
    if (filter.action) q.action = filter.action;
    if (filter.subjectId) q.subjectId = filter.subjectId;
    return this.db.models.Audit.find(q)
      .sort({ createdAt: -1 })
      .limit(Math.min(limit, 500))
      .lean<AuditRecord[]>()
      .exec();
  }
}
