import { randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import type { NodeHandle } from '../../../src/node.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';

/** A scheduled event of `tenant` created straight through the repository (test setup only). */
export async function newEvent(node: NodeHandle, tenant: string) {
  const organizerId = new Types.ObjectId();
  return new EventRepository(node.infra.mongo.tenantDb(tenant)).create({
    name: 'Consultation', startAt: new Date(), endAt: new Date(Date.now() + 3600_000), organizerId,
    participants: [{ userId: organizerId, role: 'host' }], attachments: [], meetingCode: randomBytes(4).toString('hex'),
  });
}
