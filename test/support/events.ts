import { randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import type { NodeHandle } from '../../src/composition/node.js';
import type { EventStatus } from '../../src/core/meetings/event-status.js';
import { EventRepository } from '../../src/data/repositories/event.repository.js';

/** An ISO time `h` hours from now (event start and end times in request bodies). */
export const inHours = (h: number): string => new Date(Date.now() + h * 3_600_000).toISOString();

/**
 * An event of `tenant` created straight through the repository (test setup only), scheduled unless
 * `status` says otherwise (set on the stored document, past the state machine, for transition tests).
 */
export async function newEvent(node: NodeHandle, tenant: string, opts: { status?: EventStatus } = {}) {
  const organizerId = new Types.ObjectId();
  const db = node.infra.mongo.tenantDb(tenant);
  const event = await new EventRepository(db).create({
    name: 'Consultation',
    startAt: new Date(),
    endAt: new Date(Date.now() + 3600_000),
    organizerId,
    participants: [{ userId: organizerId, role: 'host' }],
    attachments: [],
    meetingCode: randomBytes(4).toString('hex'),
  });
  if (opts.status)
    await db.models.Event.updateOne({ _id: event._id }, { $set: { status: opts.status } }, { runValidators: true });
  return event;
}
