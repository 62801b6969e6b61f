import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png } from '../../support/form.js';
import { call, connect } from '../../support/hub-client.js';

/**
 * Inside a tenant, a file is readable by its owner, members of its event (or of an event it is attached
 * to), and administrators; nobody else, whatever path names it (download, thumbnail, /files, attachment).
 */
describe('media access inside a tenant', () => {
  let node: TestNode;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
  let privateFile: { id: string; hash: string };
  let eventFile: { id: string; hash: string };
  let consultId: string;

  const upload = async (user: string, extra: { name: string; value: string }[] = []) => {
    const { body, headers } = multipart([
      ...extra,
      { name: 'file', file: { fileName: 'scan.png', content: await png(24, 24) } },
    ]);
    const r = await node.http.post('/api/media/upload', {
      tenant: 'acme',
      token: tokens[user],
      rawBody: body,
      headers,
    });
    expect(r.status).toBe(201);
    return { id: r.body.data.id as string, hash: r.body.data.hash as string };
  };
  const get = (user: string, path: string) => node.http.get(path, { tenant: 'acme', token: tokens[user] });
  const createEvent = (user: string, extra: Record<string, unknown>) =>
    node.http.post('/api/events/create', {
      tenant: 'acme',
      token: tokens[user],
      body: { name: 'Consult', startAt: inHours(1), endAt: inHours(2), ...extra },
    });

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    for (const [u, role] of [
      ['pat', 'patient'],
      ['cara', 'clinician'],
      ['alice', 'clinician'],
      ['sam', 'support'],
      ['hs', 'device'],
      ['ada', 'admin'],
    ] as const) {
      ids[u] = await createUser(node, 'acme', {
        username: u,
        role,
        ...(role === 'device' ? { kind: 'device' as const } : {}),
      });
      tokens[u] = await tokenFor(node, 'acme', u);
    }
    const consult = await createEvent('cara', { participants: [{ userId: ids.pat }] });
    expect(consult.status).toBe(201);
    consultId = consult.body.id;
    privateFile = await upload('pat');
    eventFile = await upload('pat', [{ name: 'eventId', value: consult.body.id }]);
  });
  afterAll(async () => node?.destroy());

  it('serves a private file to its owner and an administrator only, on every download path', async () => {
    const paths = [
      `/api/media/download/acme/${privateFile.hash}`,
      `/media/download/acme/${privateFile.hash}`,
      `/files/acme/media/${privateFile.hash}`,
    ];
    for (const path of paths) {
      expect({ path, status: (await get('pat', path)).status }).toEqual({ path, status: 200 });
      expect({ path, status: (await get('ada', path)).status }).toEqual({ path, status: 200 });
      for (const user of ['alice', 'cara', 'sam', 'hs']) {
        const r = await get(user, path);
        expect({ path, user, status: r.status, code: r.body.code }).toEqual({
          path,
          user,
          status: 404,
          code: 'file_not_found',
        });
      }
    }
    for (const user of ['alice', 'sam', 'hs']) {
      const thumb = await get(user, `/api/media/thumbnail/acme/${privateFile.hash}`);
      expect({ user, status: thumb.status, code: thumb.body.code }).toEqual({
        user,
        status: 404,
        code: 'file_not_found',
      });
    }
  });

  it('serves an event file to the event members only', async () => {
    expect((await get('cara', `/api/media/download/acme/${eventFile.hash}`)).status).toBe(200);
    for (const user of ['alice', 'sam', 'hs']) {
      expect({ user, status: (await get(user, `/api/media/download/acme/${eventFile.hash}`)).status }).toEqual({
        user,
        status: 404,
      });
    }
  });

  it('refuses to attach a file the caller cannot read, and lets a member re-attach what they can read', async () => {
    const stolen = await createEvent('alice', { attachments: [privateFile.id] });
    expect(stolen.status).toBe(400);
    expect(stolen.body.errors[0].field).toBe('attachments.0');
    const own = await createEvent('cara', { attachments: [eventFile.id], participants: [{ userId: ids.alice }] });
    expect(own.status).toBe(201);
    expect((await get('alice', `/api/media/download/acme/${eventFile.hash}`)).status).toBe(200);
    expect((await get('alice', `/api/media/download/acme/${privateFile.hash}`)).status).toBe(404);
  });

  it('shares by hash on the hub only content the host may read', async () => {
    const cara = await connect(node.url!, 'acme', { token: tokens.cara });
    try {
      expect(await call(cara, 'initEvent', { eventId: consultId })).toMatchObject({ ok: true });
      expect(await call(cara, 'shareImage', { eventId: consultId, image: { hash: privateFile.hash } })).toMatchObject({
        ok: false,
        error: { code: 'file_not_found' },
      });
      expect(await call(cara, 'shareImage', { eventId: consultId, image: { hash: eventFile.hash } })).toMatchObject({
        ok: true,
      });
    } finally {
      cara.close();
    }
  });
});
