import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Types } from 'mongoose';
import * as grpc from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { newEvent } from '../../support/events.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { ParticipantLogRepository } from '../../../src/data/repositories/participant-log.repository.js';
import { TelemetryRepository } from '../../../src/data/repositories/telemetry.repository.js';
import { TelemetryClient, TelemetryCallError, conferenceScript } from '../../../src/vcs/telemetry.client.js';
import type { TelemetryRoleHandle } from '../../../src/telemetry/telemetry.role.js';
import { rooms } from '../../../src/realtime/rooms.js';
import { migrateTenant } from '../../../src/data/migrations/migrator.js';

describe('gRPC telemetry ingest and completion', () => {
  let node: TestNode;
  let address: string;
  let acmeKey: string;
  let otherKey: string;
  let sub: Redis;
  const pushes: { rooms: string[]; event: string; payload: any }[] = [];

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'actors,workers,telemetry', JOBS_BACKOFF_MS: '50' });
    await node.services.tenants.create({ name: 'acme' });
    await node.services.tenants.create({ name: 'other' });
    acmeKey = await node.services.telemetry.issueKey('acme');
    otherKey = await node.services.telemetry.issueKey('other');
    address = `127.0.0.1:${(node.roles.get('telemetry') as TelemetryRoleHandle).port}`;
    sub = new Redis(node.config.redis.url);
    sub.on('message', (_ch, raw) => pushes.push(JSON.parse(raw)));
    await sub.subscribe(node.infra.keys.hubPush);
  });
  afterAll(async () => {
    await sub.quit();
    await node.destroy();
  });

  it('completes an event from a streamed conference, with flags and ledger, applied once when sent twice', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const userId = new Types.ObjectId().toHexString();
    const script = conferenceScript({
      conferenceId: `conf-${eventId}`,
      eventId,
      chatMessages: 3,
      recording: true,
      participants: [
        { key: userId, userId, name: 'Dr Who' },
        { key: 'guest:1', name: 'Guest' },
      ],
    });
    const client = new TelemetryClient(address, 'acme', acmeKey);
    const ack = await client.stream(script);
    expect(ack).toEqual({ stored: script.length, duplicates: 0, completionsEnqueued: [`conf-${eventId}`] });

    const jobs = node.services.jobs;
    const jobId = `completion.acme.${eventId}.conf-${eventId}`;
    const done = await jobs.waitUntilFinished('telemetry-completion', jobId);
    expect(done.state).toBe('completed');

    const db = node.infra.mongo.tenantDb('acme');
    const after = await new EventRepository(db).findById(event._id);
    expect(after).toMatchObject({ status: 'completed', hasLedger: true, hasRecording: true, hasChat: true });
    const ledger = await new ParticipantLogRepository(db).listForEvent(eventId);
    expect(ledger.map((l) => [l.participantKey, l.durationSeconds])).toEqual([
      [userId, 25 * 60],
      ['guest:1', 25 * 60],
    ]);
    expect(ledger[0]!.userId?.toHexString()).toBe(userId);
    // A turn of the event's meeting actor (decision 1090): numbered like every meetingEvent of the meeting.
    const told = () =>
      pushes.filter((p) => p.event === 'meetingEvent' && p.rooms.includes(rooms.meeting('acme', eventId)));
    expect(told()).toEqual([
      {
        rooms: [rooms.meeting('acme', eventId)],
        event: 'meetingEvent',
        payload: {
          eventId,
          seq: 1,
          type: 'meetingCompleted',
          at: expect.any(String),
          data: { status: 'completed', hasLedger: true, hasRecording: true, hasChat: true },
        },
      },
    ]);

    const replay = await client.stream(script);
    expect(replay).toMatchObject({ stored: 0, duplicates: script.length });
    const completedAt = after!.completedAt;
    const again = await node.services.completion.complete({ tenant: 'acme', eventId, conferenceId: `conf-${eventId}` });
    expect(again.completed).toBe(false);
    expect((await new EventRepository(db).findById(event._id))!.completedAt).toEqual(completedAt);
    expect(await new ParticipantLogRepository(db).listForEvent(eventId)).toHaveLength(2);
    expect(await db.models.TelemetryRecord.countDocuments({ conferenceId: `conf-${eventId}` })).toBe(script.length);
    expect(told()).toHaveLength(1);
    client.close();
  });

  it("reads a leave's user back only when this node did not see its join, once per participant", async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const conferenceId = `conf-leaves-${eventId}`;
    const at = new Date(Date.now() - 60_000);
    const userId = new Types.ObjectId().toHexString();
    const rec = (sequence: number, type: string, payload: Record<string, unknown>) => ({
      conferenceId,
      sequence,
      eventId,
      type,
      occurredAt: new Date(at.getTime() + sequence * 1000),
      payload,
    });
    const reads = jest.spyOn(TelemetryRepository.prototype, 'joinedUserId');
    try {
      // Joins seen here, a guest's (no user) and a clinician's, in one batch and their leaves in the next.
      await node.services.telemetry.ingest('acme', [
        rec(1, 'participant_joined', { participantKey: 'guest:a' }),
        rec(2, 'participant_joined', { participantKey: 'doc', userId }),
        rec(3, 'participant_left', { participantKey: 'guest:a' }),
      ]);
      await node.services.telemetry.ingest('acme', [
        rec(4, 'participant_left', { participantKey: 'doc' }),
        rec(5, 'participant_joined', { participantKey: 'guest:b', userId: '' }),
        rec(6, 'participant_left', { participantKey: 'guest:b' }),
      ]);
      expect(reads).not.toHaveBeenCalled();
      // Joins this node never saw (another node stored them): each participant read back once.
      const db = node.infra.mongo.tenantDb('acme');
      await db.models.TelemetryRecord.collection.insertMany([
        {
          _id: `${conferenceId}:7` as never,
          ...rec(7, 'participant_joined', { participantKey: 'elsewhere', userId }),
          eventId: event._id,
          createdAt: new Date(),
        },
      ]);
      await node.services.telemetry.ingest('acme', [
        rec(8, 'participant_left', { participantKey: 'elsewhere' }),
        rec(9, 'participant_left', { participantKey: 'elsewhere' }),
        rec(10, 'participant_left', { participantKey: 'never-joined' }),
      ]);
      expect(reads.mock.calls.map((c) => c[1]).sort()).toEqual(['elsewhere', 'never-joined']);
    } finally {
      reads.mockRestore();
    }
  });

  it('sets only the flags the telemetry shows (unary batch, no chat, no recording)', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const client = new TelemetryClient(address, 'acme', acmeKey);
    await client.sendBatch(
      conferenceScript({ conferenceId: `b-${eventId}`, eventId, participants: [{ key: 'device:7', name: 'Headset' }] }),
    );
    await node.services.jobs.waitUntilFinished('telemetry-completion', `completion.acme.${eventId}.b-${eventId}`);
    const after = await new EventRepository(node.infra.mongo.tenantDb('acme')).findById(event._id);
    expect(after).toMatchObject({ status: 'completed', hasLedger: true, hasRecording: false, hasChat: false });
    client.close();
  });

  it('never ends an event before it started, when the meeting started later than the telemetry clock says it ended', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const db = node.infra.mongo.tenantDb('acme');
    const startedAt = new Date();
    await new EventRepository(db).transition(event._id, ['scheduled'], 'started', { startedAt });
    const client = new TelemetryClient(address, 'acme', acmeKey);
    // The conference's own clock: it began an hour before the meeting was started here and ended 30 minutes later.
    await client.sendBatch(
      conferenceScript({
        conferenceId: `skew-${eventId}`,
        eventId,
        start: new Date(startedAt.getTime() - 3_600_000),
        participants: [{ key: 'guest:1', name: 'Guest' }],
      }),
    );
    await node.services.jobs.waitUntilFinished('telemetry-completion', `completion.acme.${eventId}.skew-${eventId}`);
    const after = await new EventRepository(db).findById(event._id);
    expect(after).toMatchObject({ status: 'completed', startedAt });
    expect(after!.endedAt!.getTime()).toBeGreaterThanOrEqual(startedAt.getTime());
    client.close();
  });

  it('stores a long stream in chunks and acknowledges it whole', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const participants = Array.from({ length: 300 }, (_, i) => ({ key: `guest:${i}`, name: `Guest ${i}` }));
    const script = conferenceScript({ conferenceId: `long-${eventId}`, eventId, participants });
    expect(script.length).toBe(601);
    const client = new TelemetryClient(address, 'acme', acmeKey);
    expect(await client.stream(script)).toEqual({
      stored: 601,
      duplicates: 0,
      completionsEnqueued: [`long-${eventId}`],
    });
    await node.services.jobs.waitUntilFinished('telemetry-completion', `completion.acme.${eventId}.long-${eventId}`);
    expect(await new ParticipantLogRepository(node.infra.mongo.tenantDb('acme')).listForEvent(eventId)).toHaveLength(
      300,
    );
    client.close();
  });

  it('stores a conference sent by two concurrent streams once', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const script = conferenceScript({
      conferenceId: `race-${eventId}`,
      eventId,
      chatMessages: 1,
      participants: [
        { key: 'a', name: 'A' },
        { key: 'b', name: 'B' },
      ],
    });
    const [c1, c2] = [new TelemetryClient(address, 'acme', acmeKey), new TelemetryClient(address, 'acme', acmeKey)];
    const acks = await Promise.all([c1.stream(script), c2.stream(script)]);
    expect(acks[0]!.stored + acks[1]!.stored).toBe(script.length);
    expect(acks[0]!.duplicates + acks[1]!.duplicates).toBe(script.length);
    await node.services.jobs.waitUntilFinished('telemetry-completion', `completion.acme.${eventId}.race-${eventId}`);
    const db = node.infra.mongo.tenantDb('acme');
    expect(await db.models.TelemetryRecord.countDocuments({ conferenceId: `race-${eventId}` })).toBe(script.length);
    expect(await new ParticipantLogRepository(db).listForEvent(eventId)).toHaveLength(2);
    c1.close();
    c2.close();
  });

  it("refuses bad credentials and another tenant's key with UNAUTHENTICATED", async () => {
    const event = await newEvent(node, 'acme');
    const script = conferenceScript({ conferenceId: 'x1', eventId: event._id.toHexString(), participants: [] });
    for (const client of [
      new TelemetryClient(address, 'acme', 'wrong-key'),
      new TelemetryClient(address, 'acme', otherKey),
      new TelemetryClient(address, 'nobody', acmeKey),
    ]) {
      const err = await client.stream(script).catch((e) => e);
      expect(err).toBeInstanceOf(TelemetryCallError);
      expect(err).toMatchObject({ status: grpc.status.UNAUTHENTICATED, code: 'invalid_credentials' });
      client.close();
    }
    expect(await node.infra.mongo.tenantDb('acme').models.TelemetryRecord.countDocuments({ conferenceId: 'x1' })).toBe(
      0,
    );
  });

  it("does not reach another tenant's event with a valid key of its own", async () => {
    const acmeEvent = await newEvent(node, 'acme');
    const client = new TelemetryClient(address, 'other', otherKey);
    const err = await client
      .sendBatch(conferenceScript({ conferenceId: 'y1', eventId: acmeEvent._id.toHexString(), participants: [] }))
      .catch((e) => e);
    expect(err).toMatchObject({ status: grpc.status.NOT_FOUND, code: 'event_not_found' });
    client.close();
  });

  it('refuses a conference that names another event than the one it was first sent with, storing nothing', async () => {
    const [first, second] = [await newEvent(node, 'acme'), await newEvent(node, 'acme')];
    const client = new TelemetryClient(address, 'acme', acmeKey);
    const script = (eventId: string) =>
      conferenceScript({ conferenceId: `bound-${first._id}`, eventId, participants: [{ key: 'a', name: 'A' }] });
    expect((await client.sendBatch(script(first._id.toHexString()).slice(0, 1))).stored).toBe(1);
    const err = await client.sendBatch(script(second._id.toHexString()).slice(1)).catch((e) => e);
    expect(err).toMatchObject({ status: grpc.status.INVALID_ARGUMENT, code: 'validation_failed' });
    expect(
      await node.infra.mongo
        .tenantDb('acme')
        .models.TelemetryRecord.countDocuments({ conferenceId: `bound-${first._id}` }),
    ).toBe(1);
    client.close();
  });

  it('binds conferences stored before bindings existed when the tenant is migrated, so they keep their event', async () => {
    await node.services.tenants.create({ name: 'legacy' });
    const key = await node.services.telemetry.issueKey('legacy');
    const db = node.infra.mongo.tenantDb('legacy');
    const [event, other] = [await newEvent(node, 'legacy'), await newEvent(node, 'legacy')];
    // What a tenant at schema version 4 holds: records with ObjectId ids and no binding collection.
    await db.conn.collection('_migrations').deleteOne({ _id: 5 as never });
    await db.models.ConferenceBinding.collection.drop();
    await db.models.TelemetryRecord.collection.insertMany(
      [1, 2].map((sequence) => ({
        _id: new Types.ObjectId(),
        conferenceId: 'old-conf',
        sequence,
        eventId: event._id,
        type: 'participant_joined',
        occurredAt: new Date(),
        payload: { participantKey: `p${sequence}` },
        createdAt: new Date(),
      })) as never[],
    );
    expect((await migrateTenant(db, { displayName: 'Legacy' })).applied).toEqual(['5:conference-bindings']);
    expect(await db.models.ConferenceBinding.collection.findOne({ _id: 'old-conf' as never })).toMatchObject({
      eventId: event._id,
    });

    const client = new TelemetryClient(address, 'legacy', key);
    const replay = conferenceScript({
      conferenceId: 'old-conf',
      eventId: event._id.toHexString(),
      participants: [{ key: 'p1', name: 'P' }],
    });
    expect(await client.sendBatch(replay.slice(0, 1))).toMatchObject({ stored: 0, duplicates: 1 });
    const err = await client
      .sendBatch(conferenceScript({ conferenceId: 'old-conf', eventId: other._id.toHexString(), participants: [] }))
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'validation_failed' });
    expect(await db.models.TelemetryRecord.countDocuments({ conferenceId: 'old-conf' })).toBe(2);
    client.close();
  });

  it('refuses malformed messages with INVALID_ARGUMENT naming the field, storing nothing', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const client = new TelemetryClient(address, 'acme', acmeKey);
    const ts = { seconds: '1767261600', nanos: 0 };
    const cases: [Record<string, unknown>, string][] = [
      [
        { conferenceId: 'm1', eventId, sequence: '0', occurredAt: ts, participantLeft: { participantKey: 'a' } },
        'events[0].sequence',
      ],
      [
        {
          conferenceId: 'm1',
          eventId: 'not-an-id',
          sequence: '1',
          occurredAt: ts,
          participantLeft: { participantKey: 'a' },
        },
        'events[0].eventId',
      ],
      [{ conferenceId: 'm1', eventId, sequence: '1', occurredAt: ts }, 'events[0].payload'],
      [
        { conferenceId: 'm1', eventId, sequence: '1', occurredAt: ts, participantJoined: { participantKey: '' } },
        'events[0].participantJoined.participantKey',
      ],
    ];
    for (const [msg, field] of cases) {
      const err = await client.stream([msg], { raw: true }).catch((e) => e);
      expect(err).toMatchObject({ status: grpc.status.INVALID_ARGUMENT, code: 'validation_failed' });
      expect(err.message).toContain(field);
    }
    expect(await node.infra.mongo.tenantDb('acme').models.TelemetryRecord.countDocuments({ conferenceId: 'm1' })).toBe(
      0,
    );
    client.close();
  });
});
