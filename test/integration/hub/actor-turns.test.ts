import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Types } from 'mongoose';
import { actorSystemOf, shardOf, type RedisActorSystem } from '../../../src/actors/runtime/index.js';
import type { Caller } from '../../../src/kernel/caller.js';
import type { ActorAddress, ActorKind } from '../../../src/actors/runtime/types.js';
import { nextEvent } from '../../support/actor-kit.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { inHours } from '../../support/events.js';
import { call, connect, must, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/**
 * The call, meeting and device behaviours as the hub registers them: on the node's actor system, with
 * the MongoDB-backed repositories and services (users, call records, events, audit). Their pure turn
 * logic is unit-tested beside them (src/actors/*.actor.test.ts); this checks what the stores see.
 */
describe('actor turns on their real dependencies', () => {
  let node: TestNode;
  let system: RedisActorSystem;
  const users: Record<string, Caller> = {};

  beforeAll(async () => {
    // Actors idle this long passivate: a test lets a finished call's actor go, then its snapshot.
    node = await startTestNode({ ROLES: 'http,hub,actors', ACTOR_IDLE_MS: '300' });
    system = actorSystemOf(node.roles);
    for (const [username, role] of [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
      ['carol', 'clinician'],
      ['hs', 'device'],
    ] as const) {
      await createUser(node, 'acme', { username, role });
      const p = await node.services.auth.verifyAccessToken('acme', await tokenFor(node, 'acme', username));
      users[username] = { userId: p.userId, username, role, permissions: [...p.permissions] };
    }
  });
  afterAll(async () => node.destroy());

  const ask = <R = any>(kind: ActorKind, id: string, msg: object) => system.ask<R>({ tenant: 'acme', kind, id }, msg);
  const db = () => node.infra.mongo.tenantDb('acme').models;

  it('call: refuses a callee who is not an active user of the tenant, and writes each state to the call record', async () => {
    const callId = randomUUID();
    await expect(
      ask('call', callId, {
        type: 'init',
        caller: users.alice,
        callerName: 'Alice',
        req: { calleeIds: [new Types.ObjectId().toHexString()], callType: 'video' },
      }),
    ).rejects.toMatchObject({ code: 'user_not_found' });
    expect(await db().CallRecord.countDocuments({ _id: callId })).toBe(0);

    expect(
      await ask('call', callId, {
        type: 'init',
        caller: users.alice,
        callerName: 'Alice',
        req: { calleeIds: [users.bob!.userId], callType: 'video' },
      }),
    ).toMatchObject({ status: 'ringing' });
    const ringing = await db().CallRecord.findById(callId).lean();
    expect({ status: ringing?.status, callerId: String(ringing?.callerId) }).toEqual({
      status: 'ringing',
      callerId: users.alice!.userId,
    });
    await ask('call', callId, { type: 'accept', caller: users.bob });
    expect(await db().CallRecord.findById(callId).lean()).toMatchObject({
      status: 'active',
      answeredAt: expect.any(Date),
    });
    await ask('call', callId, { type: 'end', caller: users.bob });
    expect(await db().CallRecord.findById(callId).lean()).toMatchObject({ status: 'ended', endedAt: expect.any(Date) });
  });

  it('call: an ended call retires its snapshot; once it expired a late message finds an unknown call and the record stays', async () => {
    const callId = randomUUID();
    const at: ActorAddress = { tenant: 'acme', kind: 'call', id: callId };
    const snapshot = system.keys.snapshot(shardOf(at, node.infra.config.actors.shards), `acme/call/${callId}`);
    const redis = node.infra.redis;
    await ask('call', callId, {
      type: 'init',
      caller: users.alice,
      callerName: 'Alice',
      req: { calleeIds: [users.bob!.userId, users.carol!.userId], callType: 'video' },
    });
    await ask('call', callId, { type: 'accept', caller: users.bob });
    // A live call keeps its snapshot.
    expect(await redis.pttl(snapshot)).toBe(-1);
    await ask('call', callId, { type: 'end', caller: users.bob });
    // Ended: the snapshot expires within the retention (the default, 10 minutes) and the ring timer is gone.
    const ttl = await redis.pttl(snapshot);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600_000);
    expect(node.infra.config.actors.retiredRetentionMs).toBe(600_000);
    expect(
      await redis.zscore(system.keys.timers(shardOf(at, node.infra.config.actors.shards)), `acme/call/${callId}`),
    ).toBeNull();
    // Another party's late end still finds the ended call while the snapshot lasts.
    const idle = nextEvent(system.events, 'passivated', (p: ActorAddress) => p.id === callId);
    expect(await ask('call', callId, { type: 'end', caller: users.carol })).toMatchObject({ status: 'ended' });

    // The retention passed: the actor went idle and its snapshot expired.
    await idle;
    await redis.del(snapshot);
    for (const msg of [
      { type: 'end', caller: users.alice },
      { type: 'accept', caller: users.carol },
      { type: 'addParticipant', caller: users.alice, userId: users.carol!.userId },
    ])
      await expect(ask('call', callId, msg)).rejects.toMatchObject({ code: 'call_not_found' });
    expect(await ask('call', callId, { type: 'members' })).toEqual({ status: 'idle', memberIds: [] });
    // The id of a finished call is not placed again: the record stays the call's history.
    await expect(
      ask('call', callId, {
        type: 'init',
        caller: users.alice,
        callerName: 'Alice',
        req: { calleeIds: [users.carol!.userId], callType: 'audio' },
      }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(await db().CallRecord.findById(callId).lean()).toMatchObject({
      status: 'ended',
      answeredAt: expect.any(Date),
      endedAt: expect.any(Date),
      participantIds: [users.bob!.userId, users.carol!.userId].map((id) => new Types.ObjectId(id)),
    });
    // Read-only turns of the fresh actor wrote no snapshot.
    expect(await redis.exists(snapshot)).toBe(0);
  });

  it('meeting: only a host of the stored event starts it, its participants join, others are refused', async () => {
    const host = await node.services.auth.verifyAccessToken('acme', await tokenFor(node, 'acme', 'alice'));
    const event = await node.services.events.create(host, {
      name: 'Turns',
      startAt: inHours(0),
      endAt: inHours(1),
      participants: [{ userId: users.bob!.userId, role: 'participant' }],
      attachments: [],
    });
    const eventId = String(event._id);
    await expect(ask('meeting', eventId, { type: 'init', caller: users.bob })).rejects.toMatchObject({
      code: 'forbidden',
    });
    const started = await ask('meeting', eventId, { type: 'init', caller: users.alice });
    expect(started).toMatchObject({ eventId, meeting: { started: true } });
    expect((await db().Event.findById(eventId).lean())?.status).toBe('started');
    expect(await ask('meeting', eventId, { type: 'join', caller: users.bob })).toMatchObject({ eventId });
    await expect(ask('meeting', eventId, { type: 'join', caller: users.carol })).rejects.toMatchObject({
      code: 'event_not_found',
    });
    expect(await ask('meeting', eventId, { type: 'isMember', userId: users.carol!.userId })).toEqual({ member: false });
  });

  it('meeting: an ended meeting retires its snapshot; once it expired the event refuses controls over the hub', async () => {
    const host = await node.services.auth.verifyAccessToken('acme', await tokenFor(node, 'acme', 'alice'));
    const event = await node.services.events.create(host, {
      name: 'Retired',
      startAt: inHours(0),
      endAt: inHours(1),
      participants: [{ userId: users.bob!.userId, role: 'participant' }],
      attachments: [],
    });
    const eventId = String(event._id);
    const at: ActorAddress = { tenant: 'acme', kind: 'meeting', id: eventId };
    const snapshot = system.keys.snapshot(shardOf(at, node.infra.config.actors.shards), `acme/meeting/${eventId}`);
    const redis = node.infra.redis;
    const sockets: HubClient[] = [];
    const on = async (user: string) => {
      const socket = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', user) });
      sockets.push(socket);
      return socket;
    };
    const ends = async () => (await node.services.auth.audit.list('acme', { action: 'meeting.end', eventId })).length;
    try {
      const alice = await on('alice');
      const bob = await on('bob');
      await must(alice, 'initEvent', { eventId });
      await must(bob, 'joinEvent', { eventId });
      await must(alice, 'lockMeeting', { eventId });
      // A live meeting keeps its snapshot.
      expect(await redis.pttl(snapshot)).toBe(-1);

      const ended = await must(alice, 'endMeeting', { eventId, reason: 'Consultation over' });
      expect(ended).toMatchObject({ ended: true, affected: [users.alice!.userId, users.bob!.userId] });
      // Ended: the snapshot expires within the retention (the default, 10 minutes); the event keeps the last seq.
      const ttl = await redis.pttl(snapshot);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(600_000);
      expect(await db().Event.findById(eventId).lean()).toMatchObject({ status: 'ended', meetingSeq: ended.seq });
      expect(await ends()).toBe(1);

      // The retention passed: the actor went idle and its snapshot expired.
      expect(await must(alice, 'getMeetingDetails', { eventId })).toMatchObject({ ended: true, seq: ended.seq });
      await nextEvent(system.events, 'passivated', (p: ActorAddress) => p.id === eventId);
      await redis.del(snapshot);

      // Rebuilt from the event: controls are refused, ending again tells and audits nothing, the end shows.
      for (const m of ['lockMeeting', 'unlockMeeting'] as const)
        expect([m, await call(alice, m, { eventId })]).toEqual([
          m,
          expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'invalid_state' }) }),
        ]);
      expect(await must(alice, 'endMeeting', { eventId })).toMatchObject({
        eventId,
        ended: true,
        seq: ended.seq,
        affected: [],
      });
      expect(await ends()).toBe(1);
      expect(await must(alice, 'getMeetingDetails', { eventId })).toMatchObject({
        ended: true,
        seq: ended.seq,
        members: [],
      });
      expect(await call(bob, 'joinEvent', { eventId })).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
      // Nothing keeps a snapshot of the ended meeting for good.
      expect(await redis.pttl(snapshot)).not.toBe(-1);
      expect((await db().Event.findById(eventId).lean())?.status).toBe('ended');
    } finally {
      for (const s of sockets) s.close();
    }
  });

  it('device: a refused and an accepted remote-control command are both in the tenant audit log', async () => {
    const deviceId = `hs-${randomUUID()}`;
    await ask('device', deviceId, { type: 'rapidConnect', caller: users.hs, joinCode: 'WXYZ' });
    await ask('device', deviceId, { type: 'assignMeeting', caller: users.alice, eventId: 'ev1' });
    await expect(
      ask('device', deviceId, {
        type: 'remoteControl',
        caller: users.alice,
        member: true,
        meetingId: 'ev1',
        req: { deviceId, command: 'zoom' },
      }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await ask('device', deviceId, { type: 'requestRemote', caller: users.alice, member: true, meetingId: 'ev1' });
    await ask('device', deviceId, {
      type: 'remoteControl',
      caller: users.alice,
      member: true,
      meetingId: 'ev1',
      req: { deviceId, command: 'zoom' },
    });
    const audit = (await node.services.auth.audit.list('acme', { action: 'device.remoteControl' })).filter(
      (a) => (a.details as { deviceId?: string }).deviceId === deviceId,
    );
    expect(audit.map((a) => [a.outcome, String(a.actorId)]).sort()).toEqual([
      ['failure', users.alice!.userId],
      ['success', users.alice!.userId],
    ]);
  });
});
