import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { connect, must, type HubClient } from '../../support/hub-client.js';
import { inHours } from '../../support/events.js';
import { multipart, png } from '../../support/form.js';

const T = 'auditclin';

/**
 * Meetings (start, join, leave) and media (upload, share, download, thumbnail) done through the real
 * transports are read back from the admin audit API with their actor, subject and consultation, and
 * the chain still verifies afterwards.
 */
describe('audit trail of meetings and media', () => {
  let node: TestNode;
  let admin: string;
  let cora: string;
  let pat: string;
  const ids: Record<string, string> = {};
  const open: HubClient[] = [];

  /** Entries of the admin audit API (newest first) for a filter. */
  const trail = async (filter: Record<string, string>) => {
    const r = await node.http.get(`/api/admin/audit?${new URLSearchParams(filter)}`, { tenant: T, token: admin });
    expect(r.status).toBe(200);
    return r.body.items as {
      action: string;
      actorId?: string;
      subjectId?: string;
      eventId?: string;
      details?: Record<string, unknown>;
    }[];
  };
  /** Polls the audit API until an entry for the filter appears (an action the server does after answering). */
  const eventually = async (filter: Record<string, string>) => {
    for (let i = 0; i < 200; i++) {
      const items = await trail(filter);
      if (items.length) return items;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no audit entry for ${JSON.stringify(filter)}`);
  };
  const newConsultation = async () => {
    const r = await node.http.post('/api/events/create', {
      tenant: T,
      token: cora,
      body: { name: 'Consult', startAt: inHours(0), endAt: inHours(1), participants: [{ userId: ids.pat }] },
    });
    expect(r.status).toBe(201);
    return { eventId: r.body.id as string, meetingCode: r.body.meetingCode as string };
  };
  const verified = async () =>
    expect((await node.http.get('/api/admin/audit/verify', { tenant: T, token: admin })).body).toMatchObject({
      ok: true,
    });

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors,workers' });
    ids.ada = await createUser(node, T, { username: 'ada', role: 'admin' });
    ids.cora = await createUser(node, T, { username: 'cora', role: 'clinician' });
    ids.pat = await createUser(node, T, { username: 'pat', role: 'patient' });
    admin = await tokenFor(node, T, 'ada');
    cora = await tokenFor(node, T, 'cora');
    pat = await tokenFor(node, T, 'pat');
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it('records a meeting started and joined over the hub, joined by code over REST, and left by disconnecting', async () => {
    const { eventId, meetingCode } = await newConsultation();
    const host = await connect(node.url!, T, { token: cora });
    open.push(host);
    await must(host, 'initEvent', { eventId });
    expect(await trail({ action: 'meeting.start', eventId })).toEqual([
      expect.objectContaining({ actorId: ids.cora, eventId, details: { provider: expect.any(String) } }),
    ]);
    expect(await trail({ action: 'meeting.join', eventId })).toEqual([
      expect.objectContaining({ actorId: ids.cora, subjectId: ids.cora, eventId, details: { role: 'host' } }),
    ]);

    const patient = await connect(node.url!, T, { token: pat });
    await must(patient, 'joinEvent', { eventId });
    const byCode = await node.http.post(`/api/meetings/join/${meetingCode}`, { tenant: T, token: pat });
    expect(byCode.status).toBe(200);
    const joins = await trail({ action: 'meeting.join', eventId, actorId: ids.pat });
    expect(joins).toEqual([
      expect.objectContaining({ subjectId: ids.pat, eventId, details: { role: 'participant', byCode: true } }),
      expect.objectContaining({ subjectId: ids.pat, eventId, details: { role: 'participant' } }),
    ]);
    // Starting again starts nothing: one start per meeting.
    await must(host, 'initEvent', { eventId });
    expect(await trail({ action: 'meeting.start', eventId })).toHaveLength(1);

    patient.close();
    expect(await eventually({ action: 'meeting.leave', eventId })).toEqual([
      expect.objectContaining({ actorId: ids.pat, subjectId: ids.pat, eventId, details: { reason: 'disconnect' } }),
    ]);
    await verified();
  });

  it('records uploads, shares (by link and into an event), downloads and thumbnail reads', async () => {
    const { eventId } = await newConsultation();
    const image = await png(64, 48);
    const { body, headers } = multipart([
      { name: 'eventId', value: eventId },
      { name: 'share', value: 'true' },
      { name: 'file', file: { fileName: 'wound.png', content: image } },
    ]);
    const up = await node.http.post('/api/media/upload', { tenant: T, token: cora, rawBody: body, headers });
    expect(up.status).toBe(201);
    const { id: mediaFileId, hash } = up.body.data as { id: string; hash: string };
    const [upload] = await trail({ action: 'media.upload', eventId });
    expect(upload).toMatchObject({
      actorId: ids.cora,
      eventId,
      details: { mediaFileId, hash, kind: 'image', contentType: 'image/png', size: image.length },
    });
    const [share] = await trail({ action: 'media.share', eventId });
    expect(share).toMatchObject({ actorId: ids.cora, eventId, details: { mediaFileId, hash, via: 'link' } });
    // The share path is the capability: it is never written into the trail.
    const sharePath = up.body.data.share.path as string;
    expect(JSON.stringify(await trail({ eventId }))).not.toContain(sharePath);

    const download = await node.http.get(`/api/media/download/${T}/${hash}`, { tenant: T, token: pat });
    expect(download.status).toBe(200);
    expect(await trail({ action: 'media.download', eventId, actorId: ids.pat })).toEqual([
      expect.objectContaining({ details: { mediaFileId, hash, via: 'download' } }),
    ]);
    const shared = await node.http.get(`/api/files/shared/${sharePath}`, { tenant: T, token: admin });
    expect(shared.status).toBe(200);
    expect(await trail({ action: 'media.download', eventId, actorId: ids.ada })).toEqual([
      expect.objectContaining({ details: { mediaFileId, hash, via: 'share' } }),
    ]);

    await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.${T}.${hash}`);
    const thumb = await node.http.get(`/api/media/thumbnail/${T}/${hash}`, { tenant: T, token: pat });
    expect(thumb.status).toBe(200);
    expect(await trail({ action: 'media.thumbnail', eventId, actorId: ids.pat })).toEqual([
      expect.objectContaining({ details: { mediaFileId, hash, via: 'thumbnail' } }),
    ]);

    const host = await connect(node.url!, T, { token: cora });
    open.push(host);
    await must(host, 'initEvent', { eventId });
    await must(host, 'shareImage', { eventId, image: { hash } });
    expect(await trail({ action: 'media.share', eventId, actorId: ids.cora })).toEqual([
      expect.objectContaining({ eventId, details: { hash, via: 'event' } }),
      expect.objectContaining({ details: expect.objectContaining({ via: 'link' }) }),
    ]);
    await verified();
  });
});
