import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { as, world, type World } from './fixtures.js';
import { inHours } from '../../support/events.js';
import { loginFor } from '../../support/auth.js';

describe('meetings: join by code, rapid connect, hub-facing service API, recording hand-off', () => {
  let w: World;
  let event: { id: string; meetingCode: string };
  const principal = (tenant: string, token: string) => w.node.services.auth.verifyAccessToken(tenant, token);

  beforeAll(async () => {
    w = await world('mta', 'mtb', { ROLES: 'http,actors' });
    const r = await as(w, w.a.alice).post('/api/events/create', {
      name: 'Consult',
      startAt: inHours(0),
      endAt: inHours(1),
      participants: [{ userId: w.a.pat.id }],
    });
    event = r.body;
  });
  afterAll(async () => w.node.destroy());

  it('initEvent starts the meeting for a host only, idempotently', async () => {
    const meetings = w.node.services.meetings;
    await expect(meetings.initEvent(await principal(w.tenantA, w.a.pat.token), event.id)).rejects.toMatchObject({
      code: 'forbidden',
    });
    const first = await meetings.initEvent(await principal(w.tenantA, w.a.alice.token), event.id);
    expect(first).toMatchObject({ eventId: event.id, status: 'started', role: 'host', meetingCode: event.meetingCode });
    expect(first.join.token).toBeTruthy();
    const again = await meetings.initEvent(await principal(w.tenantA, w.a.alice.token), event.id);
    expect(again.join.roomName).toBe(first.join.roomName);
    const details = await meetings.joinDetails(await principal(w.tenantA, w.a.pat.token), event.id);
    expect(details.role).toBe('participant');
    expect(await meetings.isParticipant(w.tenantA, event.id, w.a.pat.id)).toBe(true);
    expect(await meetings.isParticipant(w.tenantA, event.id, w.a.sam.id)).toBe(false);
    expect(await meetings.isParticipant(w.tenantB, event.id, w.a.pat.id)).toBe(false);
    await expect(meetings.initEvent(await principal(w.tenantB, w.b.alice.token), event.id)).rejects.toMatchObject({
      code: 'event_not_found',
    });
  });

  it('joins by code: members with their role, others as guests', async () => {
    const pat = await as(w, w.a.pat).post(`/api/meetings/join/${event.meetingCode}`);
    expect(pat.status).toBe(200);
    expect(pat.body).toMatchObject({
      eventId: event.id,
      role: 'participant',
      participant: { identity: w.a.pat.id, name: 'Pat Patient' },
    });
    expect(pat.body.join).toMatchObject({
      roomName: expect.any(String),
      url: expect.any(String),
      token: expect.any(String),
    });
    const bob = await as(w, w.a.bob).post(`/api/meetings/join/${event.meetingCode.toLowerCase()}`);
    expect(bob.body.role).toBe('guest');
    expect((await as(w, w.a.sam).post(`/api/meetings/join/${event.meetingCode}`)).status).toBe(403);
    const dev = await as(w, w.a.dev).post(`/api/meetings/join/${event.meetingCode}`);
    expect(dev.body.participant).toMatchObject({ identity: `device:${w.a.dev.id}`, role: 'device' });
    expect((await as(w, w.a.pat).post('/api/meetings/join/ZZZZZZZZZZ')).body.code).toBe('meeting_not_found');
    expect((await as(w, w.a.pat).post('/api/meetings/join/a!')).body.errors[0].field).toBe('params.meetingCode');
    expect((await w.node.http.post(`/api/meetings/join/${event.meetingCode}`, { tenant: w.tenantA })).status).toBe(401);
    expect((await as(w, w.b.pat, w.tenantB).post(`/api/meetings/join/${event.meetingCode}`)).body.code).toBe(
      'meeting_not_found',
    );
  });

  it('names a participant as its token does: a rename shows from the next token on (decision 1153)', async () => {
    const login = await loginFor(w.node, w.tenantA, 'bob');
    const join = (token: string) =>
      w.node.http.post(`/api/meetings/join/${event.meetingCode}`, { tenant: w.tenantA, token });
    expect((await join(login.accessToken)).body.participant).toMatchObject({
      identity: w.a.bob.id,
      name: 'Bob Okafor',
    });
    await w.node.infra.mongo
      .tenantDb(w.tenantA)
      .models.User.updateOne({ _id: new Types.ObjectId(w.a.bob.id) }, { $set: { displayName: 'Dr Bob Okafor' } });
    // The token in hand was issued with the earlier name: the join names the participant by it.
    expect((await join(login.accessToken)).body.participant).toMatchObject({ name: 'Bob Okafor' });
    const refreshed = await w.node.http.post('/api/account/refresh', {
      tenant: w.tenantA,
      body: { refreshToken: login.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    expect((await join(refreshed.body.accessToken)).body.participant).toMatchObject({
      identity: w.a.bob.id,
      name: 'Dr Bob Okafor',
      role: 'guest',
    });
  });

  it('a scheduled meeting starts when someone joins by code; cancelled ones refuse', async () => {
    const fresh = (
      await as(w, w.a.alice).post('/api/events/create', { name: 'Later', startAt: inHours(1), endAt: inHours(2) })
    ).body;
    const j = await as(w, w.a.pat).post(`/api/meetings/join/${fresh.meetingCode}`);
    expect(j.body.status).toBe('started');
    const gone = (
      await as(w, w.a.alice).post('/api/events/create', { name: 'Gone', startAt: inHours(1), endAt: inHours(2) })
    ).body;
    await as(w, w.a.alice).post('/api/events/cancel', { eventIds: [gone.id] });
    expect((await as(w, w.a.pat).post(`/api/meetings/join/${gone.meetingCode}`)).body.code).toBe('invalid_state');
  });

  it('attaches a headset to an event by join code', async () => {
    const meetings = w.node.services.meetings;
    const dev = await principal(w.tenantA, w.a.dev.token);
    await expect(meetings.addDeviceToEvent(dev, { eventId: event.id, joinCode: 'WRONGCODE1' })).rejects.toMatchObject({
      code: 'event_not_found',
    });
    const r = await meetings.addDeviceToEvent(dev, { eventId: event.id, joinCode: event.meetingCode });
    expect(r).toEqual({ eventId: event.id, deviceUserId: w.a.dev.id, meetingCode: event.meetingCode });
    expect(await meetings.isParticipant(w.tenantA, event.id, w.a.dev.id)).toBe(true);
  });

  it('starts rapid connect with an available device', async () => {
    const types = (await as(w, w.a.alice).get('/api/peripheral/types')).body;
    const headset = types.find((t: { key: string }) => t.key === 'headset');
    const mapped = await as(w, w.a.alice).post(`/api/peripheral/getDevice/${headset.id}`, {
      physicalIds: ['SN-RC-1'],
      name: 'Ward 7 headset',
    });
    const r = await as(w, w.a.alice).post(`/api/meetings/startRapidConnect/${mapped.body.device.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'started',
      role: 'host',
      device: { id: mapped.body.device.id, name: 'Ward 7 headset' },
      host: { userId: w.a.alice.id },
    });
    expect(r.body.meetingCode).toMatch(/^[A-Z2-9]{10}$/);
    expect(
      (await as(w, w.a.alice).post(`/api/meetings/startRapidConnect/${new Types.ObjectId().toHexString()}`)).body.code,
    ).toBe('device_not_found');
    expect(
      (await as(w, w.b.alice, w.tenantB).post(`/api/meetings/startRapidConnect/${mapped.body.device.id}`)).body.code,
    ).toBe('device_not_found');
    // A hardware id is a device id too (decision 312): one no one mapped names no device.
    expect((await as(w, w.a.alice).post('/api/meetings/startRapidConnect/x')).body.code).toBe('device_not_found');
    expect(
      (await as(w, w.a.alice).post(`/api/meetings/startRapidConnect/${'x'.repeat(201)}`)).body.errors[0].field,
    ).toBe('params.deviceId');
  });

  it('hands startrecording to the recording job for members of the event', async () => {
    const r = await as(w, w.a.alice).get(`/api/tenant/startrecording?eventId=${event.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ eventId: event.id, state: 'starting' });
    expect(
      (await as(w, w.a.alice).get(`/api/tenant/startrecording?eventId=${event.id}&userId=${w.a.sam.id}`)).body.code,
    ).toBe('permission_denied');
    expect((await as(w, w.a.pat).get(`/api/tenant/startrecording?eventId=${event.id}`)).status).toBe(403);
    expect((await as(w, w.a.alice).get('/api/tenant/startrecording')).body.errors[0].field).toBe('query.eventId');
    expect((await as(w, w.b.alice, w.tenantB).get(`/api/tenant/startrecording?eventId=${event.id}`)).status).toBe(404);
  });
});
