import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { layout } from '../../../src/storage/layout.js';
import type { EmbeddedVcs } from '../../../src/vcs/index.js';
import { newEvent } from '../../support/events.js';

describe('recording job', () => {
  let node: TestNode;
  const userId = new Types.ObjectId().toHexString();

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'workers', JOBS_BACKOFF_MS: '20', JOBS_ATTEMPTS: '3' });
    await node.services.tenants.create({ name: 'acme' });
  });
  afterAll(async () => node.destroy());

  it('starts and stops through the VCS port, stores the recording as media of the event and sets hasRecording', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const { recording, jobs } = node.services;

    const start = await recording.requestStart('acme', eventId, userId);
    expect(start).toMatchObject({ state: 'starting', session: 1 });
    expect(await recording.requestStart('acme', eventId, userId)).toMatchObject({ session: 1, jobId: start.jobId });
    expect((await jobs.waitUntilFinished('recording', start.jobId!)).state).toBe('completed');
    expect(await recording.status('acme', eventId)).toMatchObject({ state: 'recording', session: 1 });

    const stop = await recording.requestStop('acme', eventId, userId);
    const done = await jobs.waitUntilFinished('recording', stop.jobId!);
    expect(done).toMatchObject({ state: 'completed', progress: 100 });
    const result = done.returnValue as { mediaFileId: string; hash: string; size: number };
    expect(await recording.status('acme', eventId)).toMatchObject({ state: 'stopped' });

    const db = node.infra.mongo.tenantDb('acme');
    const media = await db.models.MediaFile.find({ eventId: event._id }).lean();
    expect(media).toHaveLength(1);
    expect(media[0]).toMatchObject({
      kind: 'recording',
      contentType: 'audio/wav',
      hash: result.hash,
      size: result.size,
    });
    expect(String(media[0]!.ownerId)).toBe(userId);
    const stored = await node.infra.store.head(layout.media('acme', result.hash));
    expect(stored?.size).toBe(result.size);
    const after = await new EventRepository(db).findById(event._id);
    expect(after).toMatchObject({
      hasRecording: true,
      room: { provider: 'embedded', roomName: `consult-acme-${eventId}` },
    });
  });

  it('gives join details with a signed token for the event room (embedded VCS)', async () => {
    const vcs = node.services.vcs as EmbeddedVcs;
    const room = await vcs.createRoom('acme', '0123456789abcdef01234567');
    expect(await vcs.createRoom('acme', '0123456789abcdef01234567')).toEqual(room);
    const join = await vcs.joinDetails('acme', room, { identity: userId, name: 'Dr Who', role: 'host' });
    expect(await vcs.verifyJoinToken(join.token, room.roomName)).toEqual({
      identity: userId,
      tenant: 'acme',
      role: 'host',
      name: 'Dr Who',
    });
    await expect(vcs.verifyJoinToken(join.token, 'consult-acme-other')).rejects.toMatchObject({
      code: 'token_invalid',
    });
  });

  it('refuses stop when nothing records and unknown events with coded errors', async () => {
    const event = await newEvent(node, 'acme');
    await expect(node.services.recording.requestStop('acme', event._id.toHexString(), userId)).rejects.toMatchObject({
      code: 'invalid_state',
    });
    await expect(
      node.services.recording.requestStart('acme', new Types.ObjectId().toHexString(), userId),
    ).rejects.toMatchObject({ code: 'event_not_found' });
    await expect(node.services.recording.requestStart('acme', 'nope', userId)).rejects.toMatchObject({
      code: 'event_not_found',
    });
  });

  it('retries with backoff, then records the failure as visible (failed list and metric)', async () => {
    const event = await newEvent(node, 'acme');
    const eventId = event._id.toHexString();
    const { id } = await node.services.jobs.enqueue('recording', {
      tenant: 'acme',
      eventId,
      userId,
      action: 'stop',
      session: 42,
    });
    const view = await node.services.jobs.waitUntilFinished('recording', id);
    expect(view).toMatchObject({ state: 'failed', attemptsMade: 3 });
    expect(view.failedReason).toMatch(/not started yet/);

    const missing = await node.services.jobs.enqueue('recording', {
      tenant: 'acme',
      eventId: new Types.ObjectId().toHexString(),
      userId,
      action: 'start',
      session: 1,
    });
    const permanent = await node.services.jobs.waitUntilFinished('recording', missing.id);
    expect(permanent).toMatchObject({ state: 'failed', attemptsMade: 1 });

    const failed = await node.services.jobs.failed(['recording']);
    expect(failed.map((f) => f.id)).toEqual(expect.arrayContaining([id, missing.id]));
    const metrics = await node.infra.metrics.registry.getSingleMetricAsString('jobs_failed_total');
    expect(metrics).toMatch(/jobs_failed_total\{[^}]*job="recording"[^}]*final="true"[^}]*\} 2/);
  });

  it('validates job data at enqueue with a coded error', async () => {
    await expect(
      node.services.jobs.enqueue('recording', { tenant: 'acme', eventId: 'x', userId, action: 'start', session: 1 }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
