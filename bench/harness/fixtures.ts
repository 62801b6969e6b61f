/**
 * Set-up calls a benchmark makes on a product node, through the project's own services (test support
 * for users and tokens, so tokens are the real internal ones). Run inside the node's process.
 */
import { randomUUID } from 'node:crypto';
import type { NodeHandle } from '../../src/composition/node.js';
import { Types } from 'mongoose';
import { sortKeys } from '../../src/data/models/user.model.js';
import { loopWindow } from './loop-monitor.js';
import { pendingUserRow } from './pending-users.js';

interface AuthSupport {
  createUser(
    node: NodeHandle,
    tenant: string,
    u: { username: string; role: string; displayName?: string },
  ): Promise<string>;
  tokenFor(node: NodeHandle, tenant: string, username: string, opts?: Record<string, unknown>): Promise<string>;
}

/** test/support/auth.ts, loaded lazily: the benchmarks that need tokens say so when it is missing. */
export async function authSupport(): Promise<AuthSupport> {
  const spec = '../../test/support/auth.js';
  return (await import(spec)) as AuthSupport;
}

/** The part of services.jobs (src/data/job-queues.ts) the thumbnail benchmark drives. */
interface JobsApi {
  enqueue(name: string, data: unknown): Promise<{ id: string }>;
  waitForAll(
    name: string,
    ids: readonly string[],
    timeoutMs: number,
  ): Promise<{ completed: number; failed: { id: string; reason?: string }[]; unfinished: string[] }>;
}

export type Fixtures = Record<string, (args: any) => Promise<unknown>>;

export function fixtures(node: NodeHandle): Fixtures {
  return {
    /** The benchmark tenant; its access tokens live 2 h so a long round never sees them expire. */
    async tenant(a: { name: string }) {
      await node.services.tenants.ensure({ name: a.name, displayName: `Bench ${a.name}` });
      const { TenantConfig } = node.infra.mongo.tenantDb(a.name).models;
      await TenantConfig.updateMany({}, { $set: { 'security.session.accessTokenTtlSeconds': 7200 } });
      return { name: a.name };
    },
    /**
     * Creates `count` users `${prefix}${i}` and returns their ids and access tokens, in index order;
     * `concurrency` users at a time (1 by default; B12 signs 10,000 in).
     */
    async users(a: { tenant: string; prefix: string; count: number; role: string; concurrency?: number }) {
      const auth = await authSupport();
      const out: { username: string; id: string; token: string }[] = new Array(a.count);
      const one = async (i: number) => {
        const username = `${a.prefix}${i}`;
        const id = await auth.createUser(node, a.tenant, {
          username,
          role: a.role,
          displayName: `Bench ${a.prefix} ${i}`,
        });
        out[i] = { username, id, token: await auth.tokenFor(node, a.tenant, username) };
      };
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.max(1, Math.min(a.concurrency ?? 1, a.count)) }, async () => {
          while (next < a.count) await one(next++);
        }),
      );
      return out;
    },
    /**
     * Bulk contacts for search benchmarks: documents built with the data layer's own name keys
     * (`sortKeys(displayName, username)`: sort key, alphabet bucket and whatever search fields it sets),
     * inserted with the driver in unordered batches of 1,000 (set-up speed, not the code under test).
     */
    async seedContacts(a: { tenant: string; count: number }) {
      const { User } = node.infra.mongo.tenantDb(a.tenant).models;
      const keys = sortKeys as unknown as (displayName: string, username?: string) => Record<string, unknown>;
      const first = [
        'Ada',
        'Ben',
        'Cleo',
        'Dan',
        'Eva',
        'Finn',
        'Gus',
        'Hana',
        'Ivo',
        'Jana',
        'Kai',
        'Lena',
        'Mara',
        'Nils',
        'Ola',
        'Pia',
        'Zoë',
        'Åsa',
        'José',
        'Noël',
      ];
      const now = new Date();
      const doc = (i: number) => {
        const displayName = `${first[i % first.length]} Contact${String(i).padStart(6, '0')}`;
        const username = `contact${i}`;
        return {
          username,
          idpSubject: username,
          displayName,
          role: 'patient',
          kind: 'person',
          status: 'active',
          createdAt: now,
          updatedAt: now,
          ...keys(displayName, username),
        };
      };
      const t0 = performance.now();
      for (let i = 0; i < a.count; i += 1000) {
        await User.collection.insertMany(
          Array.from({ length: Math.min(1000, a.count - i) }, (_, j) => doc(i + j)),
          { ordered: false },
        );
      }
      return { count: a.count, seconds: (performance.now() - t0) / 1000 };
    },
    /**
     * Point operations on the seeded contacts through the product's UserRepository, `concurrency` in
     * flight for `durationMs` each: username lookups (findByUsername) and updates by _id
     * (touchLastSeenMany of one entry, presence's write). Returns operations per second of each.
     */
    async pointRates(a: { tenant: string; count: number; concurrency: number; durationMs: number }) {
      const { UserRepository } = await import('../../src/data/repositories/user.repository.js');
      const repo = new UserRepository(node.infra.mongo.tenantDb(a.tenant));
      const { User } = node.infra.mongo.tenantDb(a.tenant).models;
      const ids = (
        await User.collection
          .find({ username: /^contact/ }, { projection: { _id: 1 } })
          .limit(2000)
          .toArray()
      ).map((d) => d._id as Types.ObjectId);
      const rate = async (op: (i: number) => Promise<unknown>) => {
        let n = 0;
        const t0 = performance.now();
        const until = t0 + a.durationMs;
        await Promise.all(
          Array.from({ length: a.concurrency }, async () => {
            while (performance.now() < until) await op(n++);
          }),
        );
        return (n / (performance.now() - t0)) * 1000;
      };
      const lookups = await rate(async (i) => {
        const u = await repo.findByUsername(`contact${(i * 7919) % a.count}`);
        if (!u) throw new Error(`contact${(i * 7919) % a.count} not found`);
      });
      const updates = await rate((i) => repo.touchLastSeenMany([{ userId: ids[i % ids.length]!, at: new Date() }]));
      return { username_lookups_per_s: lookups, updates_by_id_per_s: updates };
    },
    /**
     * `count` past events organized by one clinician (a clinician's history), driver insertMany in
     * batches of 1,000, shaped like the product's events (set-up, not the code under test).
     */
    async seedEvents(a: { tenant: string; organizerId: string; count: number }) {
      const { Event } = node.infra.mongo.tenantDb(a.tenant).models;
      const organizerId = new Types.ObjectId(a.organizerId);
      const day = 86_400_000;
      const t = Date.now();
      const doc = (i: number) => {
        const startAt = new Date(t - ((i + 1) * day) / 4);
        return {
          name: `Consultation ${i}`,
          nameLower: `consultation ${i}`,
          startAt,
          endAt: new Date(startAt.getTime() + 1800_000),
          organizerId,
          participants: [{ userId: organizerId, role: 'host' }],
          participantIds: [organizerId],
          status: 'scheduled',
          meetingCode: `b11${t.toString(36)}${i.toString(36)}`,
          createdAt: startAt,
          updatedAt: startAt,
        };
      };
      for (let i = 0; i < a.count; i += 1000) {
        await Event.collection.insertMany(
          Array.from({ length: Math.min(1000, a.count - i) }, (_, j) => doc(i + j)),
          { ordered: false },
        );
      }
      return { count: a.count };
    },
    /**
     * Scheduled events (one per organizer) starting now, each with the given participants (or event i
     * with `participantGroups[i]`); returns their ids in organizer order. Inserted directly: set-up, not
     * the code under test.
     */
    async events(a: {
      tenant: string;
      organizerIds: string[];
      participantIds?: string[];
      participantGroups?: string[][];
    }) {
      const { Event } = node.infra.mongo.tenantDb(a.tenant).models;
      const now = Date.now();
      const docs = a.organizerIds.map((organizerId, i) => {
        const given = a.participantGroups?.[i] ?? a.participantIds ?? [];
        const participants = [organizerId, ...given.filter((p) => p !== organizerId)];
        return {
          name: `Bench consultation ${i}`,
          nameLower: `bench consultation ${i}`,
          startAt: new Date(now),
          endAt: new Date(now + 3600_000),
          organizerId,
          participants: participants.map((userId) => ({
            userId,
            role: userId === organizerId ? 'host' : 'participant',
          })),
          participantIds: participants,
          status: 'scheduled',
          meetingCode: `bench${now.toString(36)}${i}${Math.random().toString(36).slice(2, 6)}`,
        };
      });
      const ids: string[] = [];
      for (let i = 0; i < docs.length; i += 500) {
        const created = await Event.insertMany(docs.slice(i, i + 500), { ordered: true });
        ids.push(...created.map((d) => String(d._id)));
      }
      return ids;
    },
    /**
     * The database's own write rate for a subject's documents: unordered insertMany of documents shaped
     * like the subject's, `batch` per call with `concurrency` calls in flight, for `durationMs`, into a
     * scratch collection with the real collection's indexes (same schema), in the same tenant database,
     * left in place (decision 1181). A reference beside B8/B10, which store every row they take.
     */
    async insertCeiling(a: {
      tenant: string;
      model: 'TelemetryRecord' | 'PendingUser';
      batch: number;
      concurrency: number;
      durationMs: number;
    }) {
      const db = node.infra.mongo.tenantDb(a.tenant);
      const scratch = `ceiling_${a.model.toLowerCase()}_${Date.now().toString(36)}`;
      const model = db.conn.model(scratch, db.models[a.model].schema, scratch);
      await model.createCollection();
      await model.createIndexes();
      const run = Date.now().toString(36);
      const eventId = new Types.ObjectId();
      const importId = randomUUID();
      let next = 0;
      const doc = (i: number) =>
        a.model === 'TelemetryRecord'
          ? {
              _id: `c-${run}:${i}`,
              conferenceId: `c-${run}`,
              sequence: i,
              eventId,
              type: 'participant_joined',
              occurredAt: new Date(),
              payload: { participantKey: `p${i}`, displayName: `Participant ${i}` },
              createdAt: new Date(),
            }
          : pendingUserDoc(i);
      // The import's own document for B8's sheet row i (PendingUserRepository.upsertMany): field for field
      // in its order, the sheet's values (each call writes a fresh collection), an import id of the same
      // form (a UUID, the leading key of two indexes), rows numbered from 2 under the header.
      const pendingUserDoc = (i: number) => {
        const [username, email, displayName, role] = pendingUserRow(i);
        const now = new Date();
        return {
          username,
          displayName,
          role,
          importId,
          rowNumber: i + 2,
          email,
          status: 'pending',
          createdAt: now,
          updatedAt: now,
        };
      };
      const t0 = performance.now();
      const until = t0 + a.durationMs;
      await Promise.all(
        Array.from({ length: a.concurrency }, async () => {
          while (performance.now() < until) {
            const docs = Array.from({ length: a.batch }, () => doc(next++));
            await model.collection.insertMany(docs as never[], { ordered: false });
          }
        }),
      );
      const elapsed = performance.now() - t0;
      // The scratch collection is kept until the benchmark drops its tenants' databases at its end
      // (stopProduct): dropped here, its pages became garbage that the embedded server's store rewrote
      // (H2's chunk compaction, which runs while writes come in) in the next measured window, the
      // product's, which then paid for the reference's clean-up (decision 1181).
      db.conn.deleteModel(scratch);
      return { docs_per_s: (next / elapsed) * 1000, docs: next };
    },
    /**
     * The database's own rate for the writes a telemetry batch makes with its announcements, by the bare
     * driver: records of the ingest's mix (two in three announce, with the entry the ingest writes)
     * inserted unordered, their entries appended to the event log in one ordered insert (numbers on
     * from the head read once: no other writer meanwhile), and pulled from the records in one update;
     * `batch` records per step, `concurrency` in flight. Into the tenant's own collections, as the
     * product's rounds write them: both sides see collections of the same size (inserts into a large
     * collection are slower than into an empty one on the embedded server).
     */
    async outboxWritesCeiling(a: { tenant: string; batch: number; concurrency: number; durationMs: number }) {
      const { announce } = await import('../../src/core/webhooks/webhook-events.js');
      const db = node.infra.mongo.tenantDb(a.tenant);
      const { WebhookLogRepository } = await import('../../src/data/repositories/webhook-log.repository.js');
      const tag = Date.now().toString(36);
      const records = db.models.TelemetryRecord.collection;
      const log = db.models.WebhookEvent.collection;
      const eventId = new Types.ObjectId();
      const conferenceId = `ceiling-${tag}`;
      let next = 0;
      let seq = await new WebhookLogRepository(db).head();
      const t0 = performance.now();
      const until = t0 + a.durationMs;
      await Promise.all(
        Array.from({ length: a.concurrency }, async () => {
          while (performance.now() < until) {
            const docs = Array.from({ length: a.batch }, (_, i) => {
              const s = next++;
              const type = i % 3 === 0 ? 'participant_joined' : i % 3 === 1 ? 'participant_left' : 'chat_activity';
              const payload = type === 'chat_activity' ? { messageCount: 2 } : { participantKey: `guest:${s}` };
              const data = { conferenceId, occurredAt: new Date().toISOString(), participantKey: `guest:${s}` };
              return {
                _id: `${conferenceId}:${s}`,
                conferenceId,
                sequence: s,
                eventId,
                type,
                occurredAt: new Date(),
                payload,
                createdAt: new Date(),
                ...(type === 'chat_activity'
                  ? {}
                  : {
                      outbox: [
                        announce(
                          type === 'participant_joined' ? 'participant.joined' : 'participant.left',
                          String(eventId),
                          data,
                        ),
                      ],
                    }),
              };
            });
            await records.insertMany(docs as never[], { ordered: false });
            const announced = docs.filter((d) => d.outbox);
            const publishedAt = new Date();
            await log.insertMany(
              announced.map((d) => {
                const e = d.outbox![0]!;
                return {
                  _id: ++seq,
                  eventId: e.id,
                  type: e.type,
                  consultationId: e.consultationId,
                  occurredAt: e.at,
                  publishedAt,
                  data: e.data,
                };
              }) as never[],
              { ordered: true },
            );
            await records.updateMany({ _id: { $in: announced.map((d) => d._id) as never[] } }, {
              $pull: { outbox: { id: { $in: announced.map((d) => d.outbox![0]!.id) } } },
            } as never);
          }
        }),
      );
      return { docs_per_s: (next / (performance.now() - t0)) * 1000, docs: next };
    },
    /**
     * Waits until this node's relay has published what the tenant's writers announced (nothing
     * running or queued) and returns how long that took; then, untimed, publishes anything still
     * pending in the outboxes and returns how many entries that was (none were left behind when 0).
     */
    async outboxDrained(a: { tenant: string }) {
      const t0 = performance.now();
      await node.services.webhooks.relay.settled(a.tenant);
      const ms = performance.now() - t0;
      const left = await node.services.webhooks.relay.publish(a.tenant);
      return { ms, left };
    },
    /** Raises the tenant's upload size limit (B7 uploads 1 GiB; the default is 100 MiB). */
    async uploadLimits(a: { tenant: string; maxBytes: number }) {
      const { TenantConfig } = node.infra.mongo.tenantDb(a.tenant).models;
      await TenantConfig.updateMany({}, { $set: { 'uploads.maxBytes': a.maxBytes } });
      return { maxBytes: a.maxBytes };
    },
    /** Stores images as tenant media content (as an upload would) and returns their hashes. */
    async putImages(a: { tenant: string; files: string[] }) {
      const { readFile } = await import('node:fs/promises');
      const { layout } = await import('../../src/storage/layout.js');
      const { createHash } = await import('node:crypto');
      const hashes: string[] = [];
      for (const f of a.files) {
        const buf = await readFile(f);
        const hash = createHash('sha256').update(buf).digest('hex');
        await node.infra.store.put(layout.media(a.tenant, hash), buf, { contentType: 'image/jpeg' });
        hashes.push(hash);
      }
      return hashes;
    },
    /**
     * Queues the thumbnail of every hash as an upload does (services.media.queueThumbnail: a burst shares
     * jobs, decision 1187) and waits for every job; returns the elapsed ms, the thumbnails made and the jobs.
     */
    async thumbnails(a: { tenant: string; hashes: string[]; timeoutMs: number }) {
      const { media, jobs } = node.services as unknown as {
        media: { queueThumbnail(tenant: string, hash: string): Promise<{ id: string }> };
        jobs: JobsApi;
      };
      const t0 = performance.now();
      const queued = await Promise.all(a.hashes.map((hash) => media.queueThumbnail(a.tenant, hash)));
      const perJob = new Map<string, number>();
      for (const q of queued) perJob.set(q.id, (perJob.get(q.id) ?? 0) + 1);
      const r = await jobs.waitForAll('thumbnail', [...perJob.keys()], a.timeoutMs);
      const elapsedMs = performance.now() - t0;
      const lost = [...r.failed.map((f) => f.id), ...r.unfinished].reduce((n, id) => n + (perJob.get(id) ?? 0), 0);
      return {
        elapsedMs,
        completed: a.hashes.length - lost,
        jobs: perJob.size,
        failed: lost,
        firstFailure:
          r.failed[0]?.reason ?? (r.unfinished.length ? `${r.unfinished.length} jobs unfinished` : undefined),
      };
    },
    /** Issues the tenant's gRPC telemetry key (services.telemetry.issueKey). */
    async telemetryKey(a: { tenant: string }) {
      return (node.services as unknown as { telemetry: { issueKey(t: string): Promise<string> } }).telemetry.issueKey(
        a.tenant,
      );
    },
    /**
     * The tenant's audit chain checked link by link from its first entry (B14: the joins' entries written
     * in batches must make the same chain one-by-one appends make), and how many entries it holds.
     */
    async auditLinks(a: { tenant: string }) {
      const r = await node.services.auth.audit.verifyLinks(a.tenant);
      return { ok: r.ok, verified: r.verified, head: r.head.seq, firstBroken: r.firstBroken };
    },
    async metrics() {
      return node.infra.metrics.registry.getMetricsAsJSON();
    },
    /** The node's longest event-loop blocks since the previous call (./loop-monitor.ts; the first call starts it). */
    async loopWindow() {
      return loopWindow();
    },
  };
}
