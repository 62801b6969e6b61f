import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { EVENT_STATUSES, EVENT_TRANSITIONS, canTransition, sourcesOf, type EventStatus } from '../../../src/core/event-status.js';
import { EventSchema } from '../../../src/data/models/event.model.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import type { TenantDb } from '../../../src/data/mongo.js';

/** The decided machine (docs/event-status.md), written out pair by pair. */
const ALLOWED = new Set(['scheduled>started', 'scheduled>cancelled', 'started>ended', 'started>completed', 'ended>completed']);

describe('event status machine', () => {
  it('allows exactly the documented transitions', () => {
    for (const from of EVENT_STATUSES) {
      for (const to of EVENT_STATUSES) {
        expect({ pair: `${from}>${to}`, allowed: canTransition(from, to) }).toEqual({ pair: `${from}>${to}`, allowed: ALLOWED.has(`${from}>${to}`) });
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
    while (queue.length) for (const n of EVENT_TRANSITIONS[queue.shift()!]) if (!seen.has(n)) (seen.add(n), queue.push(n));
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

describe('event status guarded updates on the MongoDB-protocol server', () => {
  let node: TestNode;
  let db: TenantDb;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'status', displayName: 'Status Clinic' });
    db = node.infra.mongo.tenantDb('status');
  });
  afterAll(async () => node.destroy());

  async function newEvent(status: EventStatus) {
    const doc = await db.models.Event.create({
      name: 'Follow-up', nameLower: 'follow-up', startAt: new Date(), endAt: new Date(), organizerId: new Types.ObjectId(),
      meetingCode: `code-${new Types.ObjectId().toHexString()}`, status,
    });
    return doc._id;
  }

  /** The compare-and-set every status change uses: matches only when the current status may move to `to`. */
  const transition = (id: Types.ObjectId, to: EventStatus) =>
    db.models.Event.updateOne({ _id: id, status: { $in: sourcesOf(to) } }, { $set: { status: to } }).exec();

  it('lets exactly one of two concurrent completions win', async () => {
    const id = await newEvent('started');
    const results = await Promise.all([transition(id, 'completed'), transition(id, 'completed')]);
    expect(results.map((r) => r.modifiedCount).sort()).toEqual([0, 1]);
    expect((await db.models.Event.findById(id).lean().exec())?.status).toBe('completed');
  });

  it('refuses a transition out of a terminal status', async () => {
    const id = await newEvent('cancelled');
    expect((await transition(id, 'started')).matchedCount).toBe(0);
    expect((await transition(id, 'completed')).matchedCount).toBe(0);
    expect((await db.models.Event.findById(id).lean().exec())?.status).toBe('cancelled');
  });

  it('rejects a status outside the machine', async () => {
    await expect(newEvent('paused' as EventStatus)).rejects.toMatchObject({ name: 'ValidationError' });
  });
});
