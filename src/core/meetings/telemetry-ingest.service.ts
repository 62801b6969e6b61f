import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../kernel/errors.js';
import { TtlCache } from '../../kernel/ttl-cache.js';
import type { NewTelemetryRecord, TelemetryRepository } from '../../data/repositories/telemetry.repository.js';
import type { TelemetryCompletionJobData } from '../../contracts/job-definitions.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import { consultationData } from '../webhooks/consultation-events.js';
import { oid } from '../../kernel/object-id.js';
import type { EventRepository } from '../../data/repositories/event.repository.js';

interface CatalogEntry {
  status: string;
  telemetryKeyHash?: string | null;
}

/** How long each in-process fact is trusted; see docs/decisions/425-telemetry-ingest-caches.md. */
export interface TelemetryCacheOptions {
  /** Tenant status and key hash from the catalog (a rotation elsewhere takes up to this long here). */
  credentialMs: number;
  /** That an event exists (only positive answers are kept). */
  eventMs: number;
  maxEntries: number;
}

const DEFAULT_CACHE: TelemetryCacheOptions = { credentialMs: 5000, eventMs: 30_000, maxEntries: 10_000 };

interface Deps {
  catalog: {
    findByName(name: string): Promise<CatalogEntry | null>;
    setTelemetryKeyHash(name: string, hash: string): Promise<void>;
  };
  /** Throws `tenant_not_found` for a tenant that does not exist or is not active. */
  tenants: { require(name: string): Promise<unknown> };
  /** The tenant's telemetry records (a factory of the composition root). */
  records(tenant: string): TelemetryRepository;
  enqueueCompletion(data: TelemetryCompletionJobData): Promise<{ id: string }>;
  logger: Logger;
  cache?: Partial<TelemetryCacheOptions>;
  /** Publishes the outbound events a batch stored with its records (decision 890). */
  announced?: AnnounceHook;
  /**
   * The tenant's events: the first telemetry of a scheduled event starts it (`consultation.started`,
   * announced before anything the conference reports, docs/webhooks.md).
   */
  events?(tenant: string): Pick<EventRepository, 'transition'>;
}

export interface TelemetryAck {
  stored: number;
  duplicates: number;
  completionsEnqueued: string[];
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();
/** Cache key of a tenant-scoped fact (tenant names never contain a space). */
const scoped = (tenant: string, id: string) => `${tenant} ${id}`;

/**
 * The ingest's domain side: who may send (a per-tenant shared key, stored only as its SHA-256 in
 * the catalog), and what a batch does (validated records stored once per (conference, sequence),
 * completion enqueued for every conference whose end is in the batch). The facts every batch needs
 * are cached in-process: credentials for seconds, event existence briefly, conference bindings for
 * good (a binding never changes once written).
 */
export class TelemetryIngestService {
  private readonly credentials: TtlCache<string, CatalogEntry | null>;
  private readonly events: TtlCache<string, true>;
  private readonly bindings: TtlCache<string, string>;
  /** Events whose start is settled (started and announced, or past starting): nothing to do for them. */
  private readonly started: TtlCache<string, true>;
  /** Who each participant of a conference joined as (tenant, conference, participant key), for its leave. */
  private readonly joinedAs: TtlCache<string, string>;

  constructor(private readonly deps: Deps) {
    const o = { ...DEFAULT_CACHE, ...deps.cache };
    this.credentials = new TtlCache({ ttlMs: o.credentialMs, maxEntries: o.maxEntries });
    this.events = new TtlCache({ ttlMs: o.eventMs, maxEntries: o.maxEntries });
    this.bindings = new TtlCache({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: o.maxEntries });
    this.started = new TtlCache({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: o.maxEntries });
    this.joinedAs = new TtlCache({ ttlMs: o.eventMs * 20, maxEntries: o.maxEntries });
  }

  /** Issues (or rotates) a tenant's telemetry key; only its hash is kept, so this is the one time it is seen. */
  async issueKey(tenant: string): Promise<string> {
    if (!(await this.deps.catalog.findByName(tenant))) throw new AppError('tenant_not_found');
    const key = `tk_${randomBytes(32).toString('base64url')}`;
    await this.deps.catalog.setTelemetryKeyHash(tenant, sha256(key).toString('hex'));
    this.credentials.delete(tenant);
    return key;
  }

  /** Resolves the tenant a caller may write to; any mismatch is the same `unauthenticated`. */
  async authenticate(tenant: string | undefined, key: string | undefined): Promise<string> {
    if (!tenant || !key) throw new AppError('unauthenticated', 'x-tenant and a Bearer telemetry key are required');
    const rec = /^[a-z0-9-]{2,40}$/.test(tenant) ? await this.catalogEntry(tenant) : null;
    const expected = rec?.telemetryKeyHash ? Buffer.from(rec.telemetryKeyHash, 'hex') : randomBytes(32);
    const ok = timingSafeEqual(sha256(key), expected.length === 32 ? expected : randomBytes(32));
    if (!ok || !rec?.telemetryKeyHash || rec.status !== 'active')
      throw new AppError('invalid_credentials', 'Telemetry credentials refused');
    return tenant;
  }

  private catalogEntry(tenant: string): Promise<CatalogEntry | null> {
    return this.credentials.getOrLoad(tenant, async () => {
      const rec = await this.deps.catalog.findByName(tenant);
      return rec ? { status: rec.status, telemetryKeyHash: rec.telemetryKeyHash ?? null } : null;
    });
  }

  /** Stores validated records of one tenant and enqueues completions; all checks run before any record is written. */
  async ingest(tenant: string, records: readonly NewTelemetryRecord[]): Promise<TelemetryAck> {
    if (!records.length) return { stored: 0, duplicates: 0, completionsEnqueued: [] };
    await this.deps.tenants.require(tenant);
    const repo = this.deps.records(tenant);
    await this.checkConferences(tenant, repo, records);
    await this.startEvents(tenant, records);
    const leavers = await this.leavers(tenant, repo, records);
    const { stored, duplicates, announcedIn, outboxes } = await repo.storeOnce(
      records.map((r) => withAnnouncements(r, leavers)),
    );
    // Not awaited: the ingest acknowledges fast; the batch's announcements follow (or the sweep publishes them).
    if (announcedIn.length)
      void this.deps.announced?.(tenant, { source: 'TelemetryRecord', ids: announcedIn, outboxes });
    const completionsEnqueued: string[] = [];
    for (const r of records.filter((x) => x.type === 'conference_ended')) {
      await this.deps.enqueueCompletion({ tenant, eventId: r.eventId, conferenceId: r.conferenceId });
      completionsEnqueued.push(r.conferenceId);
    }
    this.deps.logger.debug({ component: 'telemetry', tenant, stored, duplicates }, 'telemetry ingested');
    return { stored, duplicates, completionsEnqueued };
  }

  /**
   * Every event must exist in this tenant, and a conference must always name the same event. Reads
   * come first (cached bindings, stored bindings by `_id`, events); only when all pass are the new
   * conferences bound, and a concurrent batch that bound one of them to another event still fails this one.
   */
  private async checkConferences(
    tenant: string,
    repo: TelemetryRepository,
    records: readonly NewTelemetryRecord[],
  ): Promise<void> {
    const claimed = new Map<string, string>();
    for (const r of records) {
      const seen = claimed.get(r.conferenceId);
      if (seen && seen !== r.eventId) throw conferenceConflict(r.conferenceId);
      claimed.set(r.conferenceId, r.eventId);
    }
    const unknown = [...claimed.keys()].filter((c) => !this.bindings.get(scoped(tenant, c)));
    const stored = unknown.length ? await repo.boundEvents(unknown) : new Map<string, string>();
    for (const [c, e] of stored) this.bindings.set(scoped(tenant, c), e);
    for (const [c, eventId] of claimed) {
      const bound = this.bindings.get(scoped(tenant, c));
      if (bound && bound !== eventId) throw conferenceConflict(c);
    }
    await this.checkEvents(tenant, repo, new Set(claimed.values()));
    const unbound = new Map(unknown.filter((c) => !stored.has(c)).map((c) => [c, claimed.get(c)!]));
    if (!unbound.size) return;
    for (const [c, eventId] of await repo.bindConferences(unbound)) {
      this.bindings.set(scoped(tenant, c), eventId);
      if (eventId !== claimed.get(c)) throw conferenceConflict(c);
    }
  }

  /**
   * A conference reporting on an event that is still scheduled started it (docs/event-status.md): the
   * move and its `consultation.started` are written and published before the batch's own announcements,
   * so a receiver hears the start before any join, leave or end (order per consultation is part of the
   * contract, docs/webhooks.md). The event's outbox is published even when another batch or node won the
   * move, so its start is in the log before this batch's entries either way. Once per event and process.
   */
  private async startEvents(tenant: string, records: readonly NewTelemetryRecord[]): Promise<void> {
    const events = this.deps.events?.(tenant);
    if (!events) return;
    const first = new Map<string, Date>();
    for (const r of records) {
      if (this.started.get(scoped(tenant, r.eventId))) continue;
      const at = first.get(r.eventId);
      if (!at || r.occurredAt < at) first.set(r.eventId, r.occurredAt);
    }
    if (!first.size) return;
    const ids = [...first.keys()].map((e) => oid(e, 'event_not_found'));
    await Promise.all(
      [...first].map(([eventId, startedAt]) =>
        events.transition(oid(eventId, 'event_not_found'), ['scheduled'], 'started', { startedAt }, (now) => [
          announce('consultation.started', eventId, consultationData(now)),
        ]),
      ),
    );
    await this.deps.announced?.(tenant, { source: 'Event', ids });
    for (const eventId of first.keys()) this.started.set(scoped(tenant, eventId), true);
  }

  /**
   * The user behind each participant leaving in this batch, from its join: in the batch, remembered
   * from an earlier batch, or read back (a leave names only the participant key on the wire).
   */
  private async leavers(
    tenant: string,
    repo: TelemetryRepository,
    records: readonly NewTelemetryRecord[],
  ): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    /** Leaves whose join this node has not seen, by participant: read back once each, together. */
    const unseen = new Map<string, { conferenceId: string; participantKey: string }>();
    for (const r of records) {
      const p = r.payload as { participantKey?: string; userId?: string };
      if (!p.participantKey) continue;
      const local = `${r.conferenceId} ${p.participantKey}`;
      const key = scoped(tenant, local);
      // A join seen here settles its leave: the user it named, or none (a guest; '' remembered) unless
      // an earlier join of the same participant named one (the stored read takes the latest that did).
      if (r.type === 'participant_joined') {
        if (p.userId) this.joinedAs.set(key, p.userId);
        else if (this.joinedAs.get(key) === undefined) this.joinedAs.set(key, '');
      }
      if (r.type !== 'participant_left' || p.userId) continue;
      const known = this.joinedAs.get(key);
      if (known === undefined) unseen.set(local, { conferenceId: r.conferenceId, participantKey: p.participantKey });
      else if (known) out.set(local, known);
    }
    const read = await Promise.all(
      [...unseen].map(
        async ([local, u]) => [local, await repo.joinedUserId(u.conferenceId, u.participantKey)] as const,
      ),
    );
    for (const [local, userId] of read)
      if (userId) {
        this.joinedAs.set(scoped(tenant, local), userId);
        out.set(local, userId);
      }
    return out;
  }

  private async checkEvents(tenant: string, repo: TelemetryRepository, eventIds: Set<string>): Promise<void> {
    const unknown = [...eventIds].filter((e) => !this.events.get(scoped(tenant, e)));
    const found = await Promise.all(unknown.map((e) => repo.eventExists(e)));
    unknown.forEach((eventId, i) => {
      if (!found[i]) throw new AppError('event_not_found', `No event ${eventId} in this tenant`);
      this.events.set(scoped(tenant, eventId), true);
    });
  }
}

/**
 * The outbound events a telemetry record announces: participants joining and leaving (a leave with the
 * user its join named), the conference's end.
 */
function withAnnouncements(r: NewTelemetryRecord, leavers: ReadonlyMap<string, string>): NewTelemetryRecord {
  const p = r.payload as { participantKey?: string; userId?: string; displayName?: string };
  const base = { conferenceId: r.conferenceId, occurredAt: r.occurredAt.toISOString() };
  const userId = p.userId || leavers.get(`${r.conferenceId} ${p.participantKey}`);
  const participant = {
    ...base,
    participantKey: p.participantKey,
    ...(userId ? { userId } : {}),
  };
  const entry =
    r.type === 'participant_joined'
      ? announce('participant.joined', r.eventId, participant)
      : r.type === 'participant_left'
        ? announce('participant.left', r.eventId, participant)
        : r.type === 'conference_ended'
          ? announce('consultation.ended', r.eventId, { ...base, endedAt: base.occurredAt })
          : undefined;
  return entry ? { ...r, outbox: [entry] } : r;
}

function conferenceConflict(conferenceId: string): AppError {
  return new AppError('validation_failed', `conference ${conferenceId} belongs to another event`, {
    errors: [{ field: 'eventId', message: "differs from the conference's event" }],
  });
}
