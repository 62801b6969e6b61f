import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { QueueEvents } from 'bullmq';
import { duplicateRedis, type RedisClient } from '../../../src/data/redis.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv } from '../../support/env.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { newEvent } from '../../support/events.js';

/**
 * Records every progress report of the queue from now on, so a report that arrives before the test
 * asks for it is not missed; `reached` resolves once `jobId` reported `progress`.
 */
function progressWatch(events: QueueEvents) {
  const seen = new Set<string>();
  const waiters = new Map<string, () => void>();
  events.on('progress', (e: { jobId: string; data: unknown }) => {
    const k = `${e.jobId}@${Number(e.data)}`;
    seen.add(k);
    waiters.get(k)?.();
  });
  return {
    reached: (jobId: string, progress: number) =>
      new Promise<void>((resolve) =>
        seen.has(`${jobId}@${progress}`) ? resolve() : waiters.set(`${jobId}@${progress}`, resolve),
      ),
  };
}

describe('a worker killed mid-job', () => {
  const env = testEnv({ JOBS_LOCK_MS: '1500', JOBS_BACKOFF_MS: '50' });
  let producer: TestNode;
  let child: ChildNode | undefined;
  let rescuer: TestNode | undefined;
  let events: QueueEvents;
  let eventsConn: RedisClient;

  beforeAll(async () => {
    producer = await startTestNode({ ...env, ROLES: 'telemetry' });
    await producer.services.tenants.create({ name: 'acme' });
    eventsConn = duplicateRedis(producer.infra.redis, { maxRetriesPerRequest: null });
    events = new QueueEvents('recording', { connection: eventsConn, prefix: producer.infra.keys.queuePrefix });
    await events.waitUntilReady();
  });
  afterAll(async () => {
    if (child) await child.kill();
    await events.close();
    await eventsConn.quit();
    await rescuer?.stop();
    await producer.destroy();
  });

  it('is finished by another worker, without duplicates', async () => {
    const event = await newEvent(producer, 'acme');
    const eventId = event._id.toHexString();
    const userId = new Types.ObjectId().toHexString();
    // The child's embedded VCS takes a minute to finalize a recording: it will be killed inside that call.
    child = await spawnChildNode({ ...env, ROLES: 'workers', VCS_EMBEDDED_FINALIZE_MS: '60000' }, 90_000);

    const start = await producer.services.recording.requestStart('acme', eventId, userId);
    expect((await producer.services.jobs.waitUntilFinished('recording', start.jobId!)).state).toBe('completed');
    const watch = progressWatch(events);
    const stop = await producer.services.recording.requestStop('acme', eventId, userId);
    await watch.reached(stop.jobId!, 10);
    expect((await producer.services.jobs.get('recording', stop.jobId!))?.state).toBe('active');
    await child.kill();

    rescuer = await startTestNode({ ...env, ROLES: 'workers', VCS_EMBEDDED_FINALIZE_MS: '0' });
    const done = await producer.services.jobs.waitUntilFinished('recording', stop.jobId!, 45_000);
    expect(done.state).toBe('completed');

    const db = producer.infra.mongo.tenantDb('acme');
    expect(await db.models.MediaFile.countDocuments({ eventId: event._id, kind: 'recording' })).toBe(1);
    expect(await new EventRepository(db).findById(event._id)).toMatchObject({ hasRecording: true });
    expect(await producer.services.recording.status('acme', eventId)).toMatchObject({ state: 'stopped', session: 1 });
  }, 180_000);
});
