import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { Types } from 'mongoose';
import {
  EVENT_STATUSES,
  EVENT_TRANSITIONS,
  canTransition,
  sourcesOf,
  type EventStatus,
} from '../../../src/core/meetings/event-status.js';
import { EventSchema } from '../../../src/data/models/event.model.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { newEvent } from '../../support/events.js';
import type { TenantDb } from '../../../src/data/mongo.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { FERRETDB_TRAITS } from '../../../src/data/server-traits.js';

/** The decided machine (docs/event-status.md), written out pair by pair. */
const ALLOWED = new Set([
  'scheduled>started',
  'scheduled>cancelled',
  'started>ended',
  'started>completed',
  'ended>completed',
]);

describe('event status machine', () => {
  it('allows exactly the documented transitions', () => {
    for (const from of EVENT_STATUSES) {
      for (const to of EVENT_STATUSES) {
        expect({ pair: `${from}>${to}`, allowed: canTransition(from, to) }).toEqual({
          pair: `${from}>${to}`,
          allowed: ALLOWED.has(`${from}>${to}`),
        });
      }
    }
  });

  it('names completed (the spec) and makes completed and cancelled terminal', () => {
    expect(EVENT_STATUSES).toContain('completed');
    expect(EVENT_TRANSITIONS.completed).toEqual([]);
    expect(EVENT_TRANSITIONS.cancelled).toEqual([]);
  });

  it('reaches every status from scheduled and never returns to it', () => {
    const seen = new Set<EventStatus>(['scheduled']);
    const queue: EventStatus[] = ['scheduled'];
    while (queue.length)
      for (const n of EVENT_TRANSITIONS[queue.shift()!]) if (!seen.has(n)) (seen.add(n), queue.push(n));
    expect([...seen].sort()).toEqual([...EVENT_STATUSES].sort());
    expect(sourcesOf('scheduled')).toEqual([]);
  });

  it('gives the guard of each atomic update', () => {
    expect(sourcesOf('completed').sort()).toEqual(['ended', 'started']);
    expect(sourcesOf('started')).toEqual(['scheduled']);
    expect(sourcesOf('cancelled')).toEqual(['scheduled']);
    expect(sourcesOf('ended')).toEqual(['started']);
  });

  it('is the enum of the stored event status, defaulting to scheduled', () => {
    const path = EventSchema.path('status') as unknown as { enumValues: string[]; defaultValue: unknown };
    expect([...path.enumValues].sort()).toEqual([...EVENT_STATUSES].sort());
    expect(path.defaultValue).toBe('scheduled');
  });
});

describe('event status transitions on the MongoDB-protocol server', () => {
  let node: TestNode;
  let db: TenantDb;
  let events: EventRepository;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'status', displayName: 'Status Clinic' });
    db = node.infra.mongo.tenantDb('status');
    events = new EventRepository(db);
  });
  afterAll(async () => node.destroy());

  const newEventIn = async (status: EventStatus) => (await newEvent(node, 'status', { status }))._id;

  const transition = (id: Types.ObjectId, to: EventStatus) =>
    events.transition(id, sourcesOf(to), to, { completedAt: new Date() });

  // Each caller moves the event out of the status it saw (`started`). Without that fixed guard the race
  // has two legal outcomes: `ended` first and then `completed` out of `ended` is a valid sequence.
  const fromStarted = (id: Types.ObjectId, to: EventStatus) =>
    events.transition(id, ['started'], to, { completedAt: new Date() });

  it('lets exactly one of concurrent transitions out of a status win, every time', async () => {
    for (let i = 0; i < 15; i++) {
      const id = await newEventIn('started');
      const results = await Promise.all([
        fromStarted(id, 'completed'),
        fromStarted(id, 'completed'),
        fromStarted(id, 'ended'),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.find(Boolean)!;
      expect((await db.models.Event.findById(id).lean().exec())?.status).toBe(winner.status);
    }
  });

  it('lets a cancellation and a start race for a scheduled event with one winner', async () => {
    const id = await newEventIn('scheduled');
    const [started, cancelled] = await Promise.all([transition(id, 'started'), transition(id, 'cancelled')]);
    expect([started, cancelled].filter(Boolean)).toHaveLength(1);
  });

  it('refuses a transition out of a terminal status', async () => {
    const id = await newEventIn('cancelled');
    expect(await transition(id, 'started')).toBeNull();
    expect(await transition(id, 'completed')).toBeNull();
    expect((await db.models.Event.findById(id).lean().exec())?.status).toBe('cancelled');
  });

  it("lets exactly one transition win through FerretDB's claims too", async () => {
    const ferret = new EventRepository({ ...db, server: FERRETDB_TRAITS });
    for (let i = 0; i < 10; i++) {
      const id = await newEventIn('started');
      const results = await Promise.all(
        [0, 1, 2].map(() => ferret.transition(id, sourcesOf('completed'), 'completed', { completedAt: new Date() })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });

  it('rolls forward a transition whose writer died after claiming it (FerretDB adapter)', async () => {
    const ferret = new EventRepository({ ...db, server: FERRETDB_TRAITS });
    const id = await newEventIn('ended');
    const update = { $set: { status: 'completed', hasLedger: true } };
    const ejson = (v: object) => mongoose.mongo.BSON.EJSON.stringify(v, { relaxed: false });
    await db.conn
      .collection<{ _id: string; at: Date; filter: string; update: string }>('_transition_claims')
      .insertOne({
        _id: `events:${id}:ended`,
        at: new Date(Date.now() - 60_000),
        filter: ejson({ _id: id, status: 'ended' }),
        update: ejson(update),
      });
    expect(await ferret.transition(id, sourcesOf('completed'), 'completed', { completedAt: new Date() })).toBeNull();
    expect(await db.models.Event.findById(id).lean().exec()).toMatchObject({ status: 'completed', hasLedger: true });
  });

  it('rejects a status outside the machine', async () => {
    await expect(newEventIn('paused' as EventStatus)).rejects.toMatchObject({ name: 'ValidationError' });
  });
});
