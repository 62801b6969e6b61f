import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../core/errors.js';
import type { TenantDb } from '../data/mongo.js';
import { TelemetryRepository, type NewTelemetryRecord } from '../data/repositories/telemetry.repository.js';
import type { TelemetryCompletionJobData } from '../workers/queues.js';

interface Deps {
  catalog: {
    findByName(name: string): Promise<{ status: string; telemetryKeyHash?: string | null } | null>;
    setTelemetryKeyHash(name: string, hash: string): Promise<void>;
  };
  tenants: { require(name: string): Promise<{ db: TenantDb }> };
  enqueueCompletion(data: TelemetryCompletionJobData): Promise<{ id: string }>;
  logger: Logger;
}

export interface TelemetryAck {
  stored: number;
  duplicates: number;
  completionsEnqueued: string[];
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * The ingest's domain side: who may send (a per-tenant shared key, stored only as its SHA-256 in
 * the catalog), and what a batch does (validated records stored once per (conference, sequence),
 * completion enqueued for every conference whose end is in the batch).
 */
export class TelemetryIngestService {
  constructor(private readonly deps: Deps) {}

  /** Issues (or rotates) a tenant's telemetry key; only its hash is kept, so this is the one time it is seen. */
  async issueKey(tenant: string): Promise<string> {
    if (!(await this.deps.catalog.findByName(tenant))) throw new AppError('tenant_not_found');
    const key = `tk_${randomBytes(32).toString('base64url')}`;
    await this.deps.catalog.setTelemetryKeyHash(tenant, sha256(key).toString('hex'));
    return key;
  }

  /** Resolves the tenant a caller may write to; any mismatch is the same `unauthenticated`. */
  async authenticate(tenant: string | undefined, key: string | undefined): Promise<string> {
    if (!tenant || !key) throw new AppError('unauthenticated', 'x-tenant and a Bearer telemetry key are required');
    const rec = /^[a-z0-9-]{2,40}$/.test(tenant) ? await this.deps.catalog.findByName(tenant) : null;
    const expected = rec?.telemetryKeyHash ? Buffer.from(rec.telemetryKeyHash, 'hex') : randomBytes(32);
    const ok = timingSafeEqual(sha256(key), expected.length === 32 ? expected : randomBytes(32));
    if (!ok || !rec?.telemetryKeyHash || rec.status !== 'active') throw new AppError('invalid_credentials', 'Telemetry credentials refused');
    return tenant;
  }

  /** Stores validated records of one tenant and enqueues completions; all checks run before any write. */
  async ingest(tenant: string, records: readonly NewTelemetryRecord[]): Promise<TelemetryAck> {
    if (!records.length) return { stored: 0, duplicates: 0, completionsEnqueued: [] };
    const { db } = await this.deps.tenants.require(tenant);
    const repo = new TelemetryRepository(db);
    await this.checkConferences(repo, records);
    const { stored, duplicates } = await repo.storeOnce(records);
    const completionsEnqueued: string[] = [];
    for (const r of records.filter((x) => x.type === 'conference_ended')) {
      await this.deps.enqueueCompletion({ tenant, eventId: r.eventId, conferenceId: r.conferenceId });
      completionsEnqueued.push(r.conferenceId);
    }
    this.deps.logger.debug({ component: 'telemetry', tenant, stored, duplicates }, 'telemetry ingested');
    return { stored, duplicates, completionsEnqueued };
  }

  /** Every event must exist in this tenant, and a conference must always name the same event. */
  private async checkConferences(repo: TelemetryRepository, records: readonly NewTelemetryRecord[]): Promise<void> {
    const byConference = new Map<string, string>();
    for (const r of records) {
      const seen = byConference.get(r.conferenceId);
      if (seen && seen !== r.eventId) throw conferenceConflict(r.conferenceId);
      byConference.set(r.conferenceId, r.eventId);
    }
    for (const [conferenceId, eventId] of byConference) {
      const bound = await repo.eventOfConference(conferenceId);
      if (bound && bound !== eventId) throw conferenceConflict(conferenceId);
    }
    for (const eventId of new Set(byConference.values())) {
      if (!(await repo.eventExists(eventId))) throw new AppError('event_not_found', `No event ${eventId} in this tenant`);
    }
  }
}

function conferenceConflict(conferenceId: string): AppError {
  return new AppError('validation_failed', `conference ${conferenceId} belongs to another event`, { errors: [{ field: 'eventId', message: 'differs from the conference\'s event' }] });
}
