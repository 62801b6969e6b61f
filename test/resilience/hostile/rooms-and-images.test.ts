import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { createHash } from 'node:crypto';
import { createUser, freePort, tokenFor } from '../../support/auth.js';
import { multipart, png } from '../../support/form.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { call, connect, must, recorder, type HubClient } from '../../support/hub-client.js';

/**
 * Hub rooms have members (an event's organizer, participants and devices), and shareImage puts only
 * https images of public hosts, or the tenant's own media, on a headset. Outside client: socket.io-client.
 */
describe('hub rooms and shared images refuse outsiders and unsafe URLs', () => {
  let node: TestNode;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const open: HubClient[] = [];
  let eventId: string;
  const on = async (user: string) => {
    const s = await connect(node.url!, 'rooms', { token: tokens[user] });
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    // A known port, so the public URL (whose port a shared media URL must name) is the real one.
    const port = await freePort();
    node = await startTestNode({
      ROLES: 'http,hub,actors',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
    for (const [username, role] of [
      ['alice', 'clinician'],
      ['pat', 'patient'],
      ['mallory', 'patient'],
      ['eve', 'clinician'],
    ] as const) {
      ids[username] = await createUser(node, 'rooms', { username, role });
      tokens[username] = await tokenFor(node, 'rooms', username);
    }
    const start = new Date(Date.now() + 60_000);
    const created = await node.http.post('/api/events/create', {
      tenant: 'rooms',
      token: tokens.alice,
      body: {
        name: 'Consult',
        startAt: start.toISOString(),
        endAt: new Date(start.getTime() + 1_800_000).toISOString(),
        participants: [{ userId: ids.pat }],
      },
    });
    expect(created.status).toBe(201);
    eventId = created.body.data?.id ?? created.body.id;
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it("lets only the event's members join its room, and greets only them", async () => {
    const [alice, pat, mallory, eve] = [await on('alice'), await on('pat'), await on('mallory'), await on('eve')];
    const heard = recorder(pat);
    expect(await call(mallory, 'joinRoom', eventId)).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await call(eve, 'joinRoom', eventId)).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await call(mallory, 'sayHiToRoom', eventId)).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    // A room nobody created answers exactly like a room one is not in.
    expect(await call(mallory, 'joinRoom', new Types.ObjectId().toHexString())).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(await call(mallory, 'joinRoom', 'lobby')).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    await must(pat, 'joinRoom', eventId);
    await must(alice, 'joinRoom', eventId);
    await must(alice, 'sayHiToRoom', eventId);
    expect(await heard.next('sayHi')).toMatchObject({
      roomId: eventId,
      from: { userId: ids.alice, username: 'alice' },
    });
  });

  it('stops greeting for someone removed from the event after joining its room', async () => {
    const pat = await on('pat');
    await must(pat, 'joinRoom', eventId);
    const removed = await node.http.post('/api/events/update', {
      tenant: 'rooms',
      token: tokens.alice,
      body: { eventId, participants: [] },
    });
    expect(removed.status).toBe(200);
    expect(await call(pat, 'sayHiToRoom', eventId)).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const back = await node.http.post('/api/events/update', {
      tenant: 'rooms',
      token: tokens.alice,
      body: { eventId, participants: [{ userId: ids.pat }] },
    });
    expect(back.status).toBe(200);
  });

  it("puts only the tenant's own media on a headset: every other URL is url_not_allowed, unknown media file_not_found", async () => {
    const alice = await on('alice');
    await must(alice, 'initEvent', { eventId });
    const port = new URL(node.url!).port;
    const image = await png(12, 12);
    const hash = createHash('sha256').update(image).digest('hex');
    const { body, headers } = multipart([{ name: 'file', file: { fileName: 'xray.png', content: image } }]);
    const up = await node.http.post('/api/media/upload', {
      tenant: 'rooms',
      token: tokens.alice,
      rawBody: body,
      headers,
    });
    expect(up.status).toBe(201);
    const unsafe = [
      'javascript:alert(document.cookie)',
      'file:///etc/passwd',
      'data:text/html,<script>alert(1)</script>',
      'http://images.example.test/xray.png',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fe80::1]/a.png',
      'https://127.0.0.1/a.png',
      'https://2130706433/a.png',
      'https://10.1.2.3/a.png',
      'https://[::ffff:169.254.169.254]/a.png',
      'https://localhost/a.png',
      'https://user:secret@images.example.test/a.png',
      // Passed the literal checks before: NAT64, 6to4, IPv4-compatible, wildcard DNS, a bare internal name.
      'https://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
      'https://[2002:a9fe:a9fe::1]/latest/meta-data/',
      'https://[::7f00:1]/a.png',
      'https://169.254.169.254.nip.io/latest/meta-data/',
      'https://metadata/computeMetadata/v1/',
      'https://images.example.test/xray.png',
      // This service's media paths, but on another host or port, of another tenant, or with a query.
      `https://images.example.test/api/media/download/rooms/${hash}`,
      `http://rooms.localhost:6379/api/media/download/rooms/${hash}`,
      `http://rooms.localhost:${port}/api/media/download/other/${hash}`,
      `http://rooms.localhost:${port}/api/media/download/rooms/${hash}?x=1`,
      `http://rooms.localhost:${port}/api/events/get`,
    ];
    for (const url of unsafe) {
      const r = await call(alice, 'shareImage', { eventId, image: { url } });
      expect({ url, r }).toMatchObject({ url, r: { ok: false, error: { code: 'url_not_allowed' } } });
    }
    const details = await must(alice, 'getMeetingDetails', { eventId });
    expect(details.sharedImage).toBeUndefined();
    expect(await call(alice, 'shareImage', { eventId, image: { hash: 'ab'.repeat(32) } })).toMatchObject({
      ok: false,
      error: { code: 'file_not_found' },
    });
    const unknown = `http://rooms.localhost:${port}/api/media/download/rooms/${'ab'.repeat(32)}`;
    expect(await call(alice, 'shareImage', { eventId, image: { url: unknown } })).toMatchObject({
      ok: false,
      error: { code: 'file_not_found' },
    });
    for (const url of [
      `http://rooms.localhost:${port}/api/media/download/rooms/${hash}`,
      `http://rooms.localhost:${port}/files/rooms/media/${hash}`,
    ]) {
      const ok = await must(alice, 'shareImage', { eventId, image: { url } });
      expect(ok.sharedImage.image).toEqual({ url });
    }
    expect((await must(alice, 'shareImage', { eventId, image: { hash } })).sharedImage.image).toEqual({ hash });
  });
});
