import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { as, world, type World } from './fixtures.js';
import { inHours } from '../../support/events.js';

describe('events REST', () => {
  let w: World;
  beforeAll(async () => {
    w = await world('eva', 'evb');
  });
  afterAll(async () => w.node.destroy());

  /** An event of alice's with pat as participant and bob as co-host, named uniquely for this test. */
  async function cardiology(tag: string): Promise<{ id: string; name: string }> {
    const name = `Cardiology ${tag} ${Math.random().toString(36).slice(2, 8)}`;
    const r = await as(w, w.a.alice).post('/api/events/create', {
      name,
      description: 'Bring results',
      startAt: inHours(1),
      endAt: inHours(2),
      participants: [{ userId: w.a.pat.id }, { userId: w.a.bob.id, role: 'host' }],
    });
    expect(r.status).toBe(201);
    return { id: r.body.id, name };
  }

  it('creates an event with the organizer as host and validates dates and participants', async () => {
    const r = await as(w, w.a.alice).post('/api/events/create', {
      name: 'Cardiology follow-up',
      description: 'Bring results',
      startAt: inHours(1),
      endAt: inHours(2),
      participants: [{ userId: w.a.pat.id }, { userId: w.a.bob.id, role: 'host' }],
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Cardiology follow-up',
      status: 'scheduled',
      organizerId: w.a.alice.id,
      participantCount: 3,
      hasLedger: false,
      hasRecording: false,
      hasChat: false,
      room: null,
    });
    expect(r.body.meetingCode).toMatch(/^[A-Z2-9]{10}$/);
    expect(r.body.participants).toEqual(
      expect.arrayContaining([
        { userId: w.a.alice.id, role: 'host' },
        { userId: w.a.pat.id, role: 'participant' },
      ]),
    );

    const backwards = await as(w, w.a.alice).post('/api/events/create', {
      name: 'x',
      startAt: inHours(2),
      endAt: inHours(1),
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.errors[0].field).toBe('endAt');
    const tooLong = await as(w, w.a.alice).post('/api/events/create', {
      name: 'x',
      startAt: inHours(1),
      endAt: inHours(40),
    });
    expect(tooLong.body.errors[0].field).toBe('endAt');
    const badDate = await as(w, w.a.alice).post('/api/events/create', {
      name: 'x',
      startAt: 'tomorrow',
      endAt: inHours(1),
    });
    expect(badDate.body.errors[0].field).toBe('startAt');
    const stranger = await as(w, w.a.alice).post('/api/events/create', {
      name: 'x',
      startAt: inHours(1),
      endAt: inHours(2),
      participants: [{ userId: w.b.pat.id }],
    });
    expect(stranger.status).toBe(400);
    expect(stranger.body.errors[0].field).toBe('participants.0.userId');
    const noFile = await as(w, w.a.alice).post('/api/events/create', {
      name: 'x',
      startAt: inHours(1),
      endAt: inHours(2),
      attachments: [new Types.ObjectId().toHexString()],
    });
    expect(noFile.body.errors[0].field).toBe('attachments.0');
    expect(
      (await as(w, w.a.alice).post('/api/events/create', {})).body.errors.map((e: { field: string }) => e.field),
    ).toEqual(expect.arrayContaining(['name', 'startAt', 'endAt']));
  });

  it('refuses creation without the permission or a token', async () => {
    expect(
      (await as(w, w.a.pat).post('/api/events/create', { name: 'x', startAt: inHours(1), endAt: inHours(2) })).status,
    ).toBe(403);
    expect((await w.node.http.post('/api/events/create', { tenant: w.tenantA, body: {} })).status).toBe(401);
  });

  it('lists, shows and lists participants for members only', async () => {
    const { id: eventId, name } = await cardiology('listing');
    const list = await as(w, w.a.pat).get(
      `/api/events/get?name=${encodeURIComponent(name.slice(name.lastIndexOf(' ') + 1))}&take=10`,
    );
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([eventId]);
    expect((await as(w, w.a.pat).get('/api/events/get?name=nothing')).body.total).toBe(0);
    const d = await as(w, w.a.pat).get(`/api/events/get/${eventId}`);
    expect(d.body.description).toBe('Bring results');
    const parts = await as(w, w.a.pat).get(`/api/events/getParticipants/${eventId}`);
    expect(parts.body.map((p: { username: string; role: string }) => `${p.username}:${p.role}`).sort()).toEqual([
      'alice:host',
      'bob:host',
      'pat:participant',
    ]);
    expect((await as(w, w.a.sam).get(`/api/events/get/${eventId}`)).status).toBe(404);
    expect((await as(w, w.a.pat).get('/api/events/get/not-an-id')).body.errors[0].field).toBe('params.eventId');
    expect((await as(w, w.a.pat).get('/api/events/get?skip=-1')).body.errors[0].field).toBe('query.skip');
  });

  it('updates a scheduled event (organizer only) with the same validation', async () => {
    const { id: eventId } = await cardiology('update');
    const u = await as(w, w.a.alice).post('/api/events/update', {
      eventId,
      name: 'Cardiology review',
      participants: [{ userId: w.a.pat.id }],
    });
    expect(u.status).toBe(200);
    expect(u.body.name).toBe('Cardiology review');
    expect(u.body.participants.map((p: { userId: string }) => p.userId).sort()).toEqual(
      [w.a.alice.id, w.a.pat.id].sort(),
    );
    expect(
      (await as(w, w.a.alice).post('/api/events/update', { eventId, endAt: inHours(0.5) })).body.errors[0].field,
    ).toBe('endAt');
    expect((await as(w, w.a.bob).post('/api/events/update', { eventId, name: 'x' })).status).toBe(404);
    expect((await as(w, w.a.alice).post('/api/events/update', { name: 'x' })).body.errors[0].field).toBe('eventId');
  });

  it('cancels scheduled events and reports the others per id', async () => {
    const other = (
      await as(w, w.a.alice).post('/api/events/create', { name: 'Spare', startAt: inHours(3), endAt: inHours(4) })
    ).body.id;
    const foreign = (
      await as(w, w.b.alice, w.tenantB).post('/api/events/create', {
        name: 'B',
        startAt: inHours(3),
        endAt: inHours(4),
      })
    ).body.id;
    const r = await as(w, w.a.alice).post('/api/events/cancel', {
      eventIds: [other, foreign],
      reason: 'clinic closed',
    });
    expect(r.body).toEqual({ cancelled: [other], failed: [{ eventId: foreign, code: 'event_not_found' }] });
    const again = await as(w, w.a.alice).post('/api/events/cancel', { eventIds: [other] });
    expect(again.body.failed).toEqual([{ eventId: other, code: 'invalid_state' }]);
    expect((await as(w, w.a.alice).get(`/api/events/get/${other}`)).body.status).toBe('cancelled');
    expect((await as(w, w.a.alice).post('/api/events/update', { eventId: other, name: 'y' })).body.code).toBe(
      'invalid_state',
    );
    const { id: eventId } = await cardiology('cancel');
    expect((await as(w, w.a.pat).post('/api/events/cancel', { eventIds: [eventId] })).status).toBe(403);
    expect((await as(w, w.a.alice).post('/api/events/cancel', { eventIds: [] })).body.errors[0].field).toBe('eventIds');
  });
});
