import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png } from '../../support/form.js';
import { call, connect } from '../../support/hub-client.js';

/**
 * shareImage of the host's private image (tenant media by hash) grants the event it is shared to read
 * access to those bytes: the headset attached to the event and the other members download it; users
 * outside the event, and other tenants, still do not.
 */
describe('sharing a private image grants the event it is shared to', () => {
  let node: TestNode;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
  let image: { id: string; hash: string };
  let consultId: string;

  const get = (user: string, path: string, tenant = 'acme') => node.http.get(path, { tenant, token: tokens[user] });
  const download = (user: string, tenant = 'acme') => get(user, `/api/media/download/${tenant}/${image.hash}`, tenant);

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    for (const [u, role] of [
      ['pat', 'patient'],
      ['cara', 'clinician'],
      ['alice', 'clinician'],
      ['hs', 'device'],
    ] as const) {
      ids[u] = await createUser(node, 'acme', {
        username: u,
        role,
        ...(role === 'device' ? { kind: 'device' as const } : {}),
      });
      tokens[u] = await tokenFor(node, 'acme', u);
    }
    ids.other = await createUser(node, 'other', { username: 'olga', role: 'admin' });
    tokens.olga = await tokenFor(node, 'other', 'olga');
    const consult = await node.http.post('/api/events/create', {
      tenant: 'acme',
      token: tokens.cara,
      body: { name: 'Consult', startAt: inHours(1), endAt: inHours(2), participants: [{ userId: ids.pat }] },
    });
    expect(consult.status).toBe(201);
    consultId = consult.body.id;
    // The headset is attached to the event (as addDeviceToEvent leaves it).
    const { db } = await node.services.tenants.require('acme');
    await db.models.Event.updateOne(
      { _id: new Types.ObjectId(consultId) },
      { $addToSet: { deviceIds: new Types.ObjectId(ids.hs) } },
    ).exec();
    const { body, headers } = multipart([{ name: 'file', file: { fileName: 'xray.png', content: await png(32, 32) } }]);
    const up = await node.http.post('/api/media/upload', {
      tenant: 'acme',
      token: tokens.cara,
      rawBody: body,
      headers,
    });
    expect(up.status).toBe(201);
    image = { id: up.body.data.id, hash: up.body.data.hash };
  });
  afterAll(async () => node?.destroy());

  it('lets the headset and the event members download the image only once it is shared to their event', async () => {
    for (const user of ['hs', 'pat', 'alice'])
      expect({ user, status: (await download(user)).status }).toEqual({ user, status: 404 });
    const cara = await connect(node.url!, 'acme', { token: tokens.cara });
    try {
      expect(await call(cara, 'initEvent', { eventId: consultId })).toMatchObject({ ok: true });
      expect(await call(cara, 'shareImage', { eventId: consultId, image: { hash: image.hash } })).toMatchObject({
        ok: true,
      });
    } finally {
      cara.close();
    }
    const hs = await download('hs');
    expect(hs.status).toBe(200);
    expect((await get('hs', `/media/download/acme/${image.hash}`)).status).toBe(200);
    expect((await get('hs', `/files/acme/media/${image.hash}`)).status).toBe(200);
    expect((await download('pat')).status).toBe(200);
    // Outside the event, and from another tenant, nothing changed.
    expect((await download('alice')).status).toBe(404);
    expect((await download('olga', 'other')).status).toBe(404);
    expect((await get('olga', `/api/media/download/acme/${image.hash}`)).status).toBe(403);
  });

  it('grants nothing when the sharer is not a member of the event', async () => {
    const { body, headers } = multipart([{ name: 'file', file: { fileName: 'a.png', content: await png(20, 20) } }]);
    const own = await node.http.post('/api/media/upload', {
      tenant: 'acme',
      token: tokens.alice,
      rawBody: body,
      headers,
    });
    expect(own.status).toBe(201);
    const alice = await connect(node.url!, 'acme', { token: tokens.alice });
    try {
      expect(
        await call(alice, 'shareImage', { eventId: consultId, image: { hash: own.body.data.hash } }),
      ).toMatchObject({ ok: false });
    } finally {
      alice.close();
    }
    for (const user of ['hs', 'pat'])
      expect({ user, status: (await get(user, `/api/media/download/acme/${own.body.data.hash}`)).status }).toEqual({
        user,
        status: 404,
      });
  });
});
