import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Mongo, type TenantDb } from '../../../src/data/mongo.js';
import { migrateTenant } from '../../../src/data/migrations/migrator.js';
import { toAppError, isDuplicateKey } from '../../../src/kernel/errors.js';
import { sortKeys } from '../../../src/data/models/user.model.js';
import { UserRepository } from '../../../src/data/repositories/user.repository.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { SessionRepository } from '../../../src/data/repositories/session.repository.js';
import { LoginCodeRepository } from '../../../src/data/repositories/login-code.repository.js';
import { OfflineTokenRepository } from '../../../src/data/repositories/offline-token.repository.js';
import { FavouriteRepository } from '../../../src/data/repositories/favourite.repository.js';
import { GroupRepository } from '../../../src/data/repositories/group.repository.js';
import { MediaFileRepository } from '../../../src/data/repositories/media-file.repository.js';
import { DeviceRepository } from '../../../src/data/repositories/device.repository.js';
import { CallRecordRepository } from '../../../src/data/repositories/call-record.repository.js';
import { TelemetryRepository } from '../../../src/data/repositories/telemetry.repository.js';
import { NoticeRepository } from '../../../src/data/repositories/notice.repository.js';
import { PendingUserRepository } from '../../../src/data/repositories/pending-user.repository.js';
import { ImportRepository } from '../../../src/data/repositories/import.repository.js';
import { AuditRepository } from '../../../src/data/repositories/audit.repository.js';
import { CredentialRepository } from '../../../src/data/repositories/credential.repository.js';
import { PENDING_FILTER, WebhookLogRepository } from '../../../src/data/repositories/webhook-log.repository.js';
import { announce } from '../../../src/core/webhooks/webhook-events.js';
import { uniqueId } from '../../support/env.js';

/**
 * The data layer's contract, run against every MongoDB-protocol server the product supports: the test
 * server always (TEST_MONGODB_URI, which `npm test` points at mongo-java-server in memory), and also
 * FerretDB (TEST_FERRETDB_URI) and a real MongoDB (TEST_REAL_MONGODB_URI) when those variables name one.
 * Each server gets its own databases; the repositories run with the traits detected on it (server-traits.ts).
 */
const servers: [string, string][] = [
  ['test server', process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27028/'],
  ...(process.env.TEST_FERRETDB_URI ? [['FerretDB', process.env.TEST_FERRETDB_URI] as [string, string]] : []),
  ...(process.env.TEST_REAL_MONGODB_URI ? [['MongoDB', process.env.TEST_REAL_MONGODB_URI] as [string, string]] : []),
];

const oid = () => new Types.ObjectId();
const race = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

describe.each(servers)('data-layer contract on %s', (name, uri) => {
  let mongo: Mongo;
  let db: TenantDb;
  const id = uniqueId();

  beforeAll(async () => {
    mongo = await Mongo.connect({ uri, catalogDb: `cc_${id}`, tenantDbPrefix: `ct_${id}_`, timeoutMs: 10_000 });
    db = mongo.tenantDb('contract');
    await migrateTenant(db, { displayName: 'Contract Clinic' });
  });
  afterAll(async () => {
    await mongo.dropTenantDb('contract');
    await mongo.close();
  });

  async function newUser(name: string, extra: Record<string, unknown> = {}) {
    const username = `${name.toLowerCase().replace(/[^a-z0-9]/g, '')}-${uniqueId()}`;
    const doc = await db.models.User.create({
      username,
      idpSubject: `sub-${username}`,
      displayName: name,
      ...sortKeys(name),
      role: 'patient',
      ...extra,
    });
    return doc.toObject();
  }

  describe('users', () => {
    it('refuses a second user with the same username, exactly once among concurrent creators, as a conflict', async () => {
      const username = `dup-${uniqueId()}`;
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          db.models.User.create({ username, idpSubject: `s-${i}-${username}`, displayName: 'Dup', ...sortKeys('Dup') }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(refused).toHaveLength(5);
      for (const r of refused) expect(toAppError(r.reason).code).toBe('conflict');
    });

    it("refuses an update onto another user's unique value as a duplicate key, a conflict", async () => {
      const a = await newUser('Una Unique');
      const b = await newUser('Ulla Unique');
      const err = await db.models.User.updateOne({ _id: b._id }, { $set: { username: a.username } })
        .exec()
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(isDuplicateKey(err)).toBe(true);
      expect(toAppError(err).code).toBe('conflict');
      expect((await db.models.User.findById(b._id).lean().exec())?.username).toBe(b.username);
    });

    it('finds users by id, username and ids; searches, counts and buckets the directory', async () => {
      const tag = uniqueId().slice(-6);
      const names = [`Zed ${tag} Alpha`, `Zoë ${tag} Beta`, `Zora ${tag} Gamma`];
      const made = [];
      for (const n of names) made.push(await newUser(n));
      await newUser(`Zack ${tag} Gone`, { status: 'disabled' });
      const repo = new UserRepository(db);
      expect((await repo.findById(made[0]!._id))?.username).toBe(made[0]!.username);
      expect((await repo.findByUsername(made[1]!.username.toUpperCase()))?._id).toEqual(made[1]!._id);
      expect((await repo.findByIds(made.map((u) => u._id))).length).toBe(3);
      expect(await repo.existingActiveIds([...made.map((u) => u._id), oid()])).toEqual(
        new Set(made.map((u) => String(u._id))),
      );
      const page = await repo.search({ name: tag, skip: 0, take: 2 });
      expect(page.map((u) => u.displayName)).toEqual([`Zed ${tag} Alpha`, `Zoë ${tag} Beta`]);
      expect((await repo.search({ name: tag, skip: 2, take: 2 })).map((u) => u.displayName)).toEqual([
        `Zora ${tag} Gamma`,
      ]);
      expect(await repo.count({ name: tag })).toBe(3);
      expect(await repo.count({ name: tag.toUpperCase(), initial: 'Z', excludeId: made[0]!._id })).toBe(2);
      expect(await repo.count({ name: tag }, 2)).toBe(2);
      expect(await repo.count({ name: tag }, 5)).toBe(3);
      const buckets = await repo.initials();
      expect(buckets.find((b) => b.initial === 'Z')?.count).toBeGreaterThanOrEqual(3);
    });

    it('moves lastSeenAt only forward, for hundreds of users in one call', async () => {
      const users = await db.models.User.insertMany(
        Array.from({ length: 120 }, (_, i) => ({
          username: `ls${i}-${uniqueId()}`,
          idpSubject: `ls${i}-${uniqueId()}`,
          displayName: `L ${i}`,
          ...sortKeys(`L ${i}`),
        })),
      );
      const repo = new UserRepository(db);
      const later = new Date('2026-03-02T00:00:00Z');
      await repo.touchLastSeenMany(users.map((u) => ({ userId: u._id, at: later })));
      await repo.touchLastSeenMany(users.map((u) => ({ userId: u._id, at: new Date('2026-03-01T00:00:00Z') })));
      expect(await db.models.User.countDocuments({ _id: { $in: users.map((u) => u._id) }, lastSeenAt: later })).toBe(
        120,
      );
    });

    it('updates a profile and returns the new document', async () => {
      const u = await newUser('Pat Profile');
      const after = await new UserRepository(db).updateProfile(u._id, {
        title: 'Dr',
        ...sortKeys('Patricia Profile'),
        displayName: 'Patricia Profile',
      });
      expect(after).toMatchObject({ title: 'Dr', displayName: 'Patricia Profile', sortName: 'patricia profile' });
    });
  });

  describe('events', () => {
    const newEvent = (organizerId: Types.ObjectId, participants: Types.ObjectId[], startAt = new Date()) =>
      new EventRepository(db).create({
        name: 'Consult',
        startAt,
        endAt: new Date(startAt.getTime() + 3_600_000),
        organizerId,
        participants: participants.map((userId) => ({ userId, role: 'participant' })),
        attachments: [],
        meetingCode: `m-${uniqueId()}`,
      });

    it('moves an event out of a status for exactly one of concurrent callers (compare-and-set)', async () => {
      const repo = new EventRepository(db);
      for (let i = 0; i < 10; i++) {
        const e = await newEvent(oid(), []);
        await repo.transition(e._id, ['scheduled'], 'started');
        const won = await race(4, (k) => repo.transition(e._id, ['started'], k % 2 ? 'ended' : 'completed'));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect((await repo.findById(e._id))?.status).toBe(won.find(Boolean)!.status);
      }
    });

    it('edits only a scheduled event, only by its organizer', async () => {
      const repo = new EventRepository(db);
      const organizer = oid();
      const e = await newEvent(organizer, []);
      expect(await repo.update(e._id, oid(), { name: 'Other' })).toBeNull();
      expect(await repo.update(e._id, organizer, { name: 'Renamed' })).toMatchObject({
        name: 'Renamed',
        nameLower: 'renamed',
      });
      await repo.transition(e._id, ['scheduled'], 'cancelled');
      expect(await repo.update(e._id, organizer, { name: 'Late' })).toBeNull();
    });

    it("lists, counts and finds a user's events, newest first, and its counterparts", async () => {
      const repo = new EventRepository(db);
      const me = oid();
      const other = oid();
      for (let i = 0; i < 5; i++)
        await newEvent(i % 2 ? me : other, i % 2 ? [other] : [me], new Date(Date.UTC(2026, 0, 1 + i)));
      await newEvent(other, []);
      const all = await repo.list(me, { skip: 0, take: 10 });
      expect(all.map((e) => e.startAt.getTime())).toEqual(
        [...all.map((e) => e.startAt.getTime())].sort((a, b) => b - a),
      );
      expect(all).toHaveLength(5);
      expect(await repo.count(me)).toBe(5);
      expect((await repo.list(me, { skip: 3, take: 10 })).map(String)).toEqual(all.slice(3).map(String));
      expect(await repo.findVisible(all[0]!._id, me)).not.toBeNull();
      expect(await repo.findVisible(all[0]!._id, oid())).toBeNull();
      expect(await repo.findByMeetingCode(all[0]!.meetingCode)).toMatchObject({ _id: all[0]!._id });
      const counterparts = await repo.recentCounterparts(me, 10);
      expect(counterparts.every((c) => c.id.equals(other))).toBe(true);
      const device = oid();
      await repo.addDevice(all[0]!._id, device);
      await repo.addDevice(all[0]!._id, device);
      expect((await repo.findById(all[0]!._id))?.deviceIds).toHaveLength(1);
    });

    it('finds an event for its organizer, a participant and an attached device, and for no one else', async () => {
      const repo = new EventRepository(db);
      const organizer = oid();
      const participant = oid();
      const device = oid();
      const e = await newEvent(organizer, [participant]);
      await repo.addDevice(e._id, device);
      for (const who of [organizer, participant, device])
        expect(await repo.findVisible(e._id, who)).toMatchObject({ _id: e._id });
      expect(await repo.findVisible(e._id, oid())).toBeNull();
      // Another event's people do not see this one, and no one sees an event that does not exist.
      const other = await newEvent(oid(), [oid()]);
      expect(await repo.findVisible(e._id, other.organizerId)).toBeNull();
      expect(await repo.findVisible(oid(), organizer)).toBeNull();
    });
  });

  describe('sessions, login codes, offline tokens', () => {
    it('lets exactly one concurrent refresh consume a refresh token', async () => {
      const sessions = new SessionRepository(db);
      for (let i = 0; i < 10; i++) {
        const sid = `c-${i}-${uniqueId()}`;
        await db.models.Session.create({
          _id: sid,
          userId: oid(),
          method: 'oidc',
          refreshHash: `h0-${sid}`,
          expiresAt: new Date(Date.now() + 60_000),
        });
        const now = new Date();
        const won = await race(4, (k) => sessions.rotate(sid, `h0-${sid}`, `h1-${k}-${sid}`, now));
        expect(won.filter(Boolean)).toHaveLength(1);
      }
    });

    it('revokes live sessions once', async () => {
      const sessions = new SessionRepository(db);
      const userId = String(oid());
      for (let i = 0; i < 3; i++)
        await db.models.Session.create({
          _id: `r-${i}-${uniqueId()}`,
          userId,
          method: 'oidc',
          refreshHash: `h-${uniqueId()}`,
          expiresAt: new Date(Date.now() + 60_000),
        });
      expect(await sessions.liveIdsForUser(userId, new Date())).toHaveLength(3);
      expect(await sessions.revoke({ userId }, 'logout')).toHaveLength(3);
      expect(await sessions.revoke({ userId }, 'logout')).toHaveLength(0);
    });

    it('approves a login code once and redeems it once among concurrent callers', async () => {
      const codes = new LoginCodeRepository(db);
      const approver = oid();
      for (let i = 0; i < 8; i++) {
        const code = `lc-${uniqueId()}`;
        await codes.create({ code, pollSecretHash: 'p', expiresAt: new Date(Date.now() + 60_000) });
        const approved = await race(3, () =>
          codes.approve(code, { userId: String(approver), permissions: [] }, new Date()),
        );
        expect(approved.filter(Boolean)).toHaveLength(1);
        const redeemed = await race(3, () => codes.redeem(code, 'p', new Date()));
        expect(redeemed.filter(Boolean)).toHaveLength(1);
      }
    });

    it('revokes an offline token once', async () => {
      const tokens = new OfflineTokenRepository(db);
      const userId = String(oid());
      const tid = await tokens.create({
        tokenHash: `t-${uniqueId()}`,
        userId,
        purpose: 'kiosk',
        permissions: [],
        expiresAt: new Date(Date.now() + 60_000),
      });
      const revoked = await race(3, () => tokens.revoke(tid, userId));
      expect(revoked.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('unique keys settle concurrent writers', () => {
    it('creates one media file per client reference among concurrent retries', async () => {
      const files = new MediaFileRepository(db);
      const clientRef = `ref-${uniqueId()}`;
      const results = await race(5, () =>
        files.createOnce({
          clientRef,
          ownerId: String(oid()),
          fileName: 'a.png',
          extension: 'png',
          hash: 'a'.repeat(64),
          size: 1,
          contentType: 'image/png',
          kind: 'image',
          thumbnailStatus: 'pending',
        }),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => String(r.record._id))).size).toBe(1);
    });

    it('converges concurrent first sightings of a device on one document', async () => {
      const devices = new DeviceRepository(db);
      const fingerprint = `fp-${uniqueId()}`;
      const results = await race(5, () =>
        devices.upsertByFingerprint({
          typeId: oid(),
          physicalIds: ['x'],
          fingerprint,
          deviceKeyHash: 'k',
          name: 'Headset',
        }),
      );
      expect(new Set(results.map((d) => String(d._id))).size).toBe(1);
      expect(await db.models.Device.countDocuments({ fingerprint })).toBe(1);
    });

    it('marks a favourite once however often it is set, and unmarks it', async () => {
      const favs = new FavouriteRepository(db);
      const me = oid();
      const c = oid();
      await race(4, () => favs.set(me, c, true));
      expect(await favs.contactIds(me)).toEqual([c]);
      expect(await favs.among(me, [c, oid()])).toEqual(new Set([String(c)]));
      await favs.set(me, c, false);
      expect(await favs.contactIds(me)).toEqual([]);
    });

    it('stores each telemetry message once among concurrent replays', async () => {
      const tel = new TelemetryRepository(db);
      const conferenceId = `conf-${uniqueId()}`;
      const eventId = String(oid());
      const batch = Array.from({ length: 30 }, (_, sequence) => ({
        conferenceId,
        sequence,
        eventId,
        type: 'participant.joined',
        occurredAt: new Date(),
        payload: {},
      }));
      const results = await race(3, () => tel.storeOnce(batch as never));
      expect(results.reduce((s, r) => s + r.stored, 0)).toBe(30);
      expect(results.reduce((s, r) => s + r.duplicates, 0)).toBe(60);
      expect((await tel.listForConference(conferenceId)).map((r) => r.sequence)).toEqual(batch.map((b) => b.sequence));
      // Conferences whose ids extend this one's (their records' ids share its prefix) are not its records.
      for (const other of [`${conferenceId}:b`, `${conferenceId}b`, `${conferenceId};`])
        await tel.storeOnce(batch.slice(0, 3).map((b) => ({ ...b, conferenceId: other })) as never);
      expect((await tel.listForConference(conferenceId)).map((r) => r.sequence)).toEqual(batch.map((b) => b.sequence));
      expect((await tel.listForConference(`${conferenceId}:b`)).map((r) => r.sequence)).toEqual([0, 1, 2]);
      const bound = await race(3, (k) =>
        tel.bindConferences(new Map([[conferenceId, k === 0 ? eventId : String(oid())]])),
      );
      expect(new Set(bound.map((m) => m.get(conferenceId))).size).toBe(1);
    });

    it('keeps a call record from a newer epoch against a stale owner', async () => {
      const calls = new CallRecordRepository(db);
      const callId = `call-${uniqueId()}`;
      const callerId = String(oid());
      const other = String(oid());
      const base = { callId, callerId, participantIds: [other], startedAt: new Date() };
      expect(await calls.save({ ...base, status: 'ringing' }, 2)).toBe(true);
      expect(await calls.save({ ...base, status: 'ended' }, 3)).toBe(true);
      expect(await calls.save({ ...base, status: 'active' }, 2)).toBe(false);
      expect(await db.models.CallRecord.findById(callId).lean().exec()).toMatchObject({
        status: 'ended',
        actorEpoch: 3,
      });
      const counterparts = await new CallRecordRepository(db).recentCounterparts(new Types.ObjectId(callerId), 10);
      expect(counterparts.map((c) => String(c.id))).toEqual([other]);
    });
  });

  describe('groups, notices, imports, audit, accounts', () => {
    it('changes a group only for its owner', async () => {
      const groups = new GroupRepository(db);
      const owner = oid();
      const member = oid();
      const g = await groups.create(owner, 'Ward', [member]);
      expect(await groups.rename(g._id, oid(), 'X')).toBeNull();
      expect(await groups.rename(g._id, owner, 'Ward 2')).toMatchObject({ name: 'Ward 2' });
      const extra = oid();
      await groups.addParticipants(g._id, owner, [extra, extra]);
      expect((await groups.findVisible(g._id, extra))?.participantIds.map(String).sort()).toEqual(
        [String(member), String(extra)].sort(),
      );
      await groups.removeParticipants(g._id, owner, [member]);
      expect(await groups.findVisible(g._id, member)).toBeNull();
      expect((await groups.listVisible(owner)).map((x) => String(x._id))).toContain(String(g._id));
    });

    it('keeps one current notice and acknowledges once', async () => {
      const notices = new NoticeRepository(db);
      const by = oid();
      await notices.replaceCurrent({ title: 'a', body: 'a', severity: 'info', createdBy: by });
      const b = await notices.replaceCurrent({ title: 'b', body: 'b', severity: 'warning', createdBy: by });
      expect((await notices.current())?._id).toEqual(b._id);
      expect(await db.models.Notice.countDocuments({ current: true })).toBe(1);
      const u = oid();
      await race(3, () => notices.acknowledge(b._id, u));
      expect(await db.models.NoticeAck.countDocuments({ noticeId: b._id, userId: u })).toBe(1);
      expect(await notices.acknowledgedAt(b._id, u)).toBeInstanceOf(Date);
    });

    it("imports pending users idempotently and records an import's outcome in one write", async () => {
      const pending = new PendingUserRepository(db);
      const importId = `imp-${uniqueId()}`;
      const rows = Array.from({ length: 40 }, (_, i) => ({
        username: `pu${i}-${importId}`,
        displayName: `P ${i}`,
        role: 'patient',
        rowNumber: i + 2,
      }));
      await race(2, () => pending.upsertMany(rows, importId));
      expect(await pending.countForImport(importId)).toBe(40);
      const imports = new ImportRepository(db);
      await imports.create({ id: importId, fileHash: 'f', fileName: 'u.xlsx', requestedBy: String(oid()) });
      await imports.start(importId);
      await imports.progress(
        importId,
        { rowsDone: 40, rowsImported: 40, errors: [], errorCount: 0 },
        { status: 'completed', rowsTotal: 40 },
      );
      expect(await imports.findById(importId)).toMatchObject({ status: 'completed', rowsDone: 40 });
    });

    it("tells an import's batches which usernames are users already, from held names or per batch", async () => {
      const pending = new PendingUserRepository(db);
      const a = await newUser('Held Ada');
      const b = await newUser('Held Bo');
      const asked = [a.username, `nobody-${uniqueId()}`, b.username];
      const users = await db.models.User.estimatedDocumentCount();
      // Held (the tenant's usernames read once), per batch at a bound below the tenant's size, and per batch at 0.
      for (const hold of [users + 10, users - 1, 0]) {
        const check = await pending.existingUsersCheck(hold);
        expect({ hold, found: [...(await check(asked))].sort() }).toEqual({
          hold,
          found: [a.username, b.username].sort(),
        });
      }
    });

    it('appends and lists audit entries, newest first', async () => {
      const audit = new AuditRepository(db);
      const subjectId = String(oid());
      for (const action of ['a', 'b', 'c'])
        await audit.append({ action, outcome: 'success', actorId: String(oid()), subjectId });
      expect((await audit.list({ subjectId })).map((e) => e.action)).toEqual(['c', 'b', 'a']);
    });

    it('creates embedded accounts with unique usernames and sets their role', async () => {
      const creds = new CredentialRepository(db);
      const username = `acct-${uniqueId()}`;
      const results = await Promise.allSettled(
        [0, 1, 2].map(() => creds.create({ username, displayName: 'Acct', role: 'patient' })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const created = (await creds.findByUsername(username))!;
      expect(await creds.setRole(String(created._id), 'clinician')).toBe(true);
      expect((await creds.findById(String(created._id)))?.role).toBe('clinician');
    });
  });

  describe('outboxes', () => {
    it('finds the documents with pending entries, oldest first, and reads named documents by _id', async () => {
      const col = db.models.TelemetryRecord.collection;
      const conf = `ob-${uniqueId()}`;
      const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
      const rec = (seq: number, outbox?: unknown[]) => ({
        _id: `${conf}:${seq}` as never,
        conferenceId: conf,
        sequence: seq,
        eventId: oid(),
        type: 'participant_joined',
        occurredAt: new Date(),
        payload: {},
        createdAt: new Date(),
        ...(outbox ? { outbox } : {}),
      });
      const entry = (s: number) => announce('participant.joined', undefined, { s }, at(s));
      await col.insertMany([
        rec(1),
        rec(2, [entry(30)]),
        rec(3, []),
        rec(4, [entry(10), entry(40)]),
        rec(5, [entry(20)]),
      ]);
      const eventWithEntry = await db.models.Event.collection.insertOne({
        name: 'ob',
        outbox: [entry(5)],
      } as never);
      const log = new WebhookLogRepository(db);
      const seconds = (l: Awaited<ReturnType<WebhookLogRepository['pending']>>) =>
        l.map((p) => (p.entry.data as { s: number }).s);
      const pending = await log.pending(500);
      expect(seconds(pending)).toEqual([5, 10, 20, 30, 40]);
      // One document per source when there are more than a page takes: the oldest, by its earliest entry
      // (MongoDB's order of an array field); FerretDB 1.x orders array fields by another rule, so there
      // the page is the Event's document and the whole outbox of one record.
      const page = seconds(await log.pending(1));
      if (name === 'FerretDB') {
        expect(page[0]).toBe(5);
        expect([[10, 40], [20], [30]]).toContainEqual(page.slice(1));
      } else expect(page).toEqual([5, 10, 40]);
      const named = await log.pendingIn(
        new Map<'TelemetryRecord' | 'Event', unknown[]>([
          ['TelemetryRecord', [`${conf}:2`, `${conf}:3`, `${conf}:9`]],
          ['Event', [eventWithEntry.insertedId]],
        ]),
      );
      expect(seconds(named)).toEqual([5, 30]);
      await log.clearAll(pending.map((p) => ({ source: p.source, docId: p.docId, entries: [p.entry] })));
      expect(await log.pending(500)).toEqual([]);
    });

    if (name === 'MongoDB')
      it('looks for pending entries through the outbox.at index with bounds (explain)', async () => {
        const plan = await db.models.TelemetryRecord.collection
          .find(PENDING_FILTER)
          .sort({ 'outbox.at': 1 })
          .limit(500)
          .explain('queryPlanner');
        const text = JSON.stringify(plan.queryPlanner.winningPlan);
        expect(text).not.toContain('COLLSCAN');
        expect(text).toContain('"indexName":"outbox.at_1"');
      });
  });
});
