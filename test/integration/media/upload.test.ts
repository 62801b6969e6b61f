import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png, type FormPart } from '../../support/form.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('media upload flow', () => {
  let node: TestNode;
  let alice: string;
  let bob: string;
  let guest: string;
  let otherTenant: string;

  const upload = (token: string, parts: FormPart[], tenant = 'acme', route = '/api/media/upload') => {
    const { body, headers } = multipart(parts);
    return node.http.post(route, { tenant, token, rawBody: body, headers });
  };
  const file = (fileName: string, content: Buffer, extra: FormPart[] = []): FormPart[] => [
    ...extra,
    { name: 'file', file: { fileName, content } },
  ];
  const settings = (tenant: string) => node.infra.mongo.tenantDb(tenant).models.TenantConfig;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
    const aliceId = await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    await createUser(node, 'acme', { username: 'bob', role: 'patient' });
    await createUser(node, 'acme', { username: 'gina', role: 'guest' });
    await createUser(node, 'other', { username: 'olga', role: 'clinician' });
    alice = await tokenFor(node, 'acme', 'alice');
    bob = await tokenFor(node, 'acme', 'bob');
    guest = await tokenFor(node, 'acme', 'gina');
    otherTenant = await tokenFor(node, 'other', 'olga');
    // Files name a call session alice placed (only a member of a call uploads into its record).
    for (const _id of ['sess-1', 's-late'])
      await node.infra.mongo.tenantDb('acme').models.CallRecord.create({
        _id,
        callerId: aliceId,
        participantIds: [],
        status: 'ended',
        startedAt: new Date(),
      });
  });
  afterAll(async () => node?.destroy());

  describe('POST /api/media/upload', () => {
    it('stores an image under its hash and answers a CallResult', async () => {
      const image = await png(40, 30);
      const r = await upload(alice, file('Röntgen photo.png', image, [{ name: 'sessionId', value: 'sess-1' }]));
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        success: true,
        data: {
          hash: sha(image),
          size: image.length,
          contentType: 'image/png',
          kind: 'image',
          fileName: 'Röntgen photo.png',
          sessionId: 'sess-1',
          thumbnailStatus: 'pending',
          duplicate: false,
        },
      });
      expect(r.body.data.url).toBe(`/api/media/download/acme/${sha(image)}`);
      const rec = await node.infra.mongo.tenantDb('acme').models.MediaFile.findById(r.body.data.id).lean();
      expect(rec).toMatchObject({ hash: sha(image), extension: 'png', sessionId: 'sess-1' });
    });

    it('stores the same content once, whoever uploads it', async () => {
      const content = Buffer.from('%PDF-1.7\n' + 'x'.repeat(2000));
      const dir = path.join(node.config.storage.fsRoot, 't', 'acme', 'media');
      const objects = () => readdirSync(dir).filter((f) => !f.endsWith('.meta'));
      const a = await upload(alice, file('a.pdf', content));
      const before = objects();
      const b = await upload(bob, file('b.pdf', content));
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.body.data.hash).toBe(a.body.data.hash);
      expect(b.body.data.id).not.toBe(a.body.data.id);
      expect(objects()).toEqual(before);
      expect(before.filter((f) => f === sha(content))).toHaveLength(1);
      expect(readdirSync(path.join(node.config.storage.fsRoot, '.tmp'))).toEqual([]);
    });

    it('refuses an extension the tenant does not allow', async () => {
      const r = await upload(alice, file('tool.exe', Buffer.from('MZ\x90\x00')));
      expect(r.status).toBe(415);
      expect(r.body.code).toBe('file_type_not_allowed');
      const none = await upload(alice, file('README', Buffer.from('hello')));
      expect(none.body.code).toBe('file_type_not_allowed');
    });

    it('refuses content whose header does not match the extension', async () => {
      const r = await upload(alice, file('photo.png', Buffer.from('this is plain text, not a png')));
      expect(r.status).toBe(415);
      expect(r.body.code).toBe('file_content_mismatch');
      const jpegAsPng = await upload(
        alice,
        file('photo.png', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46])),
      );
      expect(jpegAsPng.body.code).toBe('file_content_mismatch');
    });

    it('refuses a renamed executable and active content whatever the extension', async () => {
      const pe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200, 0x90)]);
      for (const name of ['invoice.pdf', 'notes.txt', 'scan.jpg']) {
        const r = await upload(alice, file(name, pe));
        expect(r.status).toBe(415);
        expect(r.body.code).toBe('file_content_mismatch');
      }
      const elf = await upload(alice, file('data.csv', Buffer.from('\x7fELF\x02\x01\x01')));
      expect(elf.body.code).toBe('file_content_mismatch');
      const script = await upload(alice, file('notes.txt', Buffer.from('#!/bin/sh\nrm -rf /\n')));
      expect(script.body.code).toBe('file_content_mismatch');
      const html = await upload(alice, file('notes.txt', Buffer.from('<html><script>alert(1)</script></html>')));
      expect(html.body.code).toBe('file_content_mismatch');
    });

    it('enforces the tenant size limit while streaming and stores nothing', async () => {
      await settings('acme').updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': 10_000 } });
      try {
        const big = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(20_000, 0x41)]);
        const r = await upload(alice, file('big.pdf', big));
        expect(r.status).toBe(413);
        expect(r.body.code).toBe('payload_too_large');
        expect(await node.infra.store.head(`t/acme/media/${sha(big)}`)).toBeNull();
        const ok = await upload(
          alice,
          file('small.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(9_000, 0x42)])),
        );
        expect(ok.status).toBe(201);
      } finally {
        await settings('acme').updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': 100 * 1024 * 1024 } });
      }
    });

    it('follows a change of the tenant extension list', async () => {
      await settings('acme').updateOne({ _id: 'tenant' }, { $pull: { 'uploads.allowedExtensions': 'pdf' } });
      try {
        const r = await upload(alice, file('c.pdf', Buffer.from('%PDF-1.7 fresh')));
        expect(r.status).toBe(415);
        expect(r.body.code).toBe('file_type_not_allowed');
      } finally {
        await settings('acme').updateOne({ _id: 'tenant' }, { $addToSet: { 'uploads.allowedExtensions': 'pdf' } });
      }
    });

    it('accepts the fields after the file and validates them', async () => {
      const r = await upload(alice, [
        { name: 'file', file: { fileName: 'n.txt', content: Buffer.from('late fields') } },
        { name: 'sessionId', value: 's-late' },
      ]);
      expect(r.status).toBe(201);
      expect(r.body.data.sessionId).toBe('s-late');
      const bad = await upload(alice, file('n.txt', Buffer.from('bad event'), [{ name: 'eventId', value: 'nope' }]));
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].field).toBe('eventId');
    });

    it('attaches to an event only for its participants', async () => {
      const users = node.infra.mongo.tenantDb('acme').models.User;
      const aliceId = (await users.findOne({ username: 'alice' }).lean())!._id;
      const ev = await node.infra.mongo.tenantDb('acme').models.Event.create({
        name: 'Consult',
        nameLower: 'consult',
        startAt: new Date(),
        endAt: new Date(Date.now() + 3600_000),
        organizerId: aliceId,
        participantIds: [aliceId],
        meetingCode: `mc-${Date.now()}`,
      });
      const ok = await upload(alice, file('e.txt', Buffer.from('for the event'), [{ name: 'eventId', value: ev.id }]));
      expect(ok.status).toBe(201);
      expect(ok.body.data.eventId).toBe(ev.id);
      const notMine = await upload(
        bob,
        file('e.txt', Buffer.from('not my event'), [{ name: 'eventId', value: ev.id }]),
      );
      expect(notMine.status).toBe(404);
      expect(notMine.body.code).toBe('event_not_found');
    });

    it('refuses malformed requests with coded 4xx', async () => {
      const noFile = await upload(alice, [{ name: 'sessionId', value: 'x' }]);
      expect(noFile.status).toBe(400);
      expect(noFile.body.errors[0].field).toBe('file');
      const two = await upload(alice, [
        { name: 'file', file: { fileName: 'a.txt', content: Buffer.from('a') } },
        { name: 'file', file: { fileName: 'b.txt', content: Buffer.from('b') } },
      ]);
      expect(two.status).toBe(400);
      const json = await node.http.post('/api/media/upload', { tenant: 'acme', token: alice, body: { file: 'x' } });
      expect(json.status).toBe(415);
      expect(json.body.code).toBe('unsupported_media_type');
      const truncated = await node.http.post('/api/media/upload', {
        tenant: 'acme',
        token: alice,
        rawBody: '--abc\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhel',
        headers: { 'content-type': 'multipart/form-data; boundary=abc' },
      });
      expect(truncated.status).toBe(400);
    });

    it('keeps serving after a client disconnects mid-file', async () => {
      const { body, headers } = multipart(
        file('cut.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(200_000, 0x43)])),
      );
      const port = new URL(node.url!).port;
      await new Promise<void>((resolve) => {
        const req = http.request({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/media/upload',
          headers: {
            ...headers,
            host: `acme.localhost:${port}`,
            authorization: `Bearer ${alice}`,
            'content-length': String(body.length),
          },
        });
        req.on('error', () => resolve());
        req.write(body.subarray(0, 100_000), () => req.destroy());
        req.on('close', () => resolve());
      });
      const after = await upload(alice, file('after.txt', Buffer.from('still serving')));
      expect(after.status).toBe(201);
    });

    it('requires a token with media:upload', async () => {
      const anon = await node.http.post('/api/media/upload', {
        tenant: 'acme',
        ...(() => {
          const m = multipart(file('a.txt', Buffer.from('a')));
          return { rawBody: m.body, headers: m.headers };
        })(),
      });
      expect(anon.status).toBe(401);
      const r = await upload(guest, file('a.txt', Buffer.from('guest')));
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
    });
  });

  describe('POST /api/media/syncFiles', () => {
    it('is idempotent by clientRef: a retried upload creates no duplicate', async () => {
      const content = Buffer.from('queued on the phone');
      const first = await upload(
        bob,
        file('q.txt', content, [{ name: 'clientRef', value: 'phone-42' }]),
        'acme',
        '/api/media/syncFiles',
      );
      expect(first.status).toBe(201);
      expect(first.body.data).toMatchObject({ clientRef: 'phone-42', duplicate: false });
      const retry = await upload(
        bob,
        file('q.txt', content, [{ name: 'clientRef', value: 'phone-42' }]),
        'acme',
        '/api/media/syncFiles',
      );
      expect(retry.status).toBe(200);
      expect(retry.body.data).toMatchObject({ id: first.body.data.id, duplicate: true });
      const lateRef = await upload(
        bob,
        [
          { name: 'file', file: { fileName: 'q.txt', content } },
          { name: 'clientRef', value: 'phone-42' },
        ],
        'acme',
        '/api/media/syncFiles',
      );
      expect(lateRef.body.data.id).toBe(first.body.data.id);
      const count = await node.infra.mongo.tenantDb('acme').models.MediaFile.countDocuments({ clientRef: /phone-42$/ });
      expect(count).toBe(1);
      const otherUser = await upload(
        alice,
        file('q.txt', content, [{ name: 'clientRef', value: 'phone-42' }]),
        'acme',
        '/api/media/syncFiles',
      );
      expect(otherUser.status).toBe(201);
      expect(otherUser.body.data.id).not.toBe(first.body.data.id);
    });

    it('requires a clientRef', async () => {
      const r = await upload(bob, file('q.txt', Buffer.from('x')), 'acme', '/api/media/syncFiles');
      expect(r.status).toBe(400);
      expect(r.body.errors[0].field).toBe('clientRef');
    });
  });

  describe('downloads', () => {
    let hash: string;
    const content = Buffer.from(`%PDF-1.7\n${'0123456789'.repeat(100)}`);

    beforeAll(async () => {
      // bob downloads his own upload (another user's private file is not his to read: media-access.test.ts).
      const r = await upload(bob, file('report.pdf', content));
      hash = r.body.data.hash;
    });

    it('serves the whole file with a strong ETag, inline or as an attachment', async () => {
      const r = await node.http.get(`/api/media/download/acme/${hash}`, { tenant: 'acme', token: bob });
      expect(r.status).toBe(200);
      expect(r.raw.equals(content)).toBe(true);
      expect(r.headers.etag).toBe(`"${hash}"`);
      expect(r.headers['content-type']).toBe('application/pdf');
      expect(r.headers['content-disposition']).toMatch(/^inline; filename="report.pdf"/);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      const forced = await node.http.get(`/api/media/download/acme/${hash}?forceDownload=true`, {
        tenant: 'acme',
        token: bob,
      });
      expect(forced.headers['content-disposition']).toMatch(/^attachment;/);
      const alias = await node.http.get(`/media/download/acme/${hash}`, { tenant: 'acme', token: bob });
      expect(alias.status).toBe(200);
      expect(alias.raw.equals(content)).toBe(true);
    });

    it('answers HEAD with the headers only', async () => {
      const r = await request(node.url!, 'HEAD', `/api/media/download/acme/${hash}`, { tenant: 'acme', token: bob });
      expect(r.status).toBe(200);
      expect(r.headers['content-length']).toBe(String(content.length));
      expect(r.headers.etag).toBe(`"${hash}"`);
      expect(r.raw.length).toBe(0);
    });

    it('answers If-None-Match with 304', async () => {
      const r = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { 'if-none-match': `W/"nope", "${hash}"` },
      });
      expect(r.status).toBe(304);
      expect(r.raw.length).toBe(0);
      const miss = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { 'if-none-match': '"other"' },
      });
      expect(miss.status).toBe(200);
    });

    it('serves byte ranges with 206 and refuses unsatisfiable ones with 416', async () => {
      const r = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { range: 'bytes=10-19' },
      });
      expect(r.status).toBe(206);
      expect(r.headers['content-range']).toBe(`bytes 10-19/${content.length}`);
      expect(r.raw.equals(content.subarray(10, 20))).toBe(true);
      const suffix = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { range: 'bytes=-5' },
      });
      expect(suffix.raw.equals(content.subarray(-5))).toBe(true);
      const open = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { range: `bytes=${content.length - 3}-` },
      });
      expect(open.raw.equals(content.subarray(-3))).toBe(true);
      const bad = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { range: `bytes=${content.length}-` },
      });
      expect(bad.status).toBe(416);
      expect(bad.headers['content-range']).toBe(`bytes */${content.length}`);
      expect(bad.body.code).toBe('range_not_satisfiable');
      const stale = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: bob,
        headers: { range: 'bytes=0-1', 'if-range': '"old"' },
      });
      expect(stale.status).toBe(200);
    });

    it('checks the path tenant against the host and token tenant', async () => {
      const r = await node.http.get(`/api/media/download/other/${hash}`, { tenant: 'acme', token: bob });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('wrong_tenant');
      const foreign = await node.http.get(`/api/media/download/other/${hash}`, { tenant: 'other', token: otherTenant });
      expect(foreign.status).toBe(404);
      const crossToken = await node.http.get(`/api/media/download/acme/${hash}`, {
        tenant: 'acme',
        token: otherTenant,
      });
      expect({ status: crossToken.status, code: crossToken.body.code }).toEqual({ status: 403, code: 'wrong_tenant' });
      const anon = await node.http.get(`/api/media/download/acme/${hash}`, { tenant: 'acme' });
      expect(anon.status).toBe(401);
      const unknown = await node.http.get(`/api/media/download/acme/${'a'.repeat(64)}`, { tenant: 'acme', token: bob });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('file_not_found');
    });

    it('serves shares by path until they expire', async () => {
      const shared = await upload(
        alice,
        file('shared.txt', Buffer.from('for the team'), [{ name: 'share', value: 'true' }]),
      );
      const p = shared.body.data.share.path;
      const r = await node.http.get(`/api/files/shared/${p}`, { tenant: 'acme', token: bob });
      expect(r.status).toBe(200);
      expect(r.text).toBe('for the team');
      expect(r.headers['content-disposition']).toMatch(/^attachment;/);
      await node.infra.mongo
        .tenantDb('acme')
        .models.FileShare.updateOne({ path: p }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const expired = await node.http.get(`/api/files/shared/${p}`, { tenant: 'acme', token: bob });
      expect(expired.status).toBe(404);
      const unknown = await node.http.get('/api/files/shared/doesnotexist123', { tenant: 'acme', token: bob });
      expect(unknown.status).toBe(404);
    });
  });

  describe('GET /files/{tenantId}/{container}/{*path}', () => {
    beforeAll(async () => {
      await node.infra.store.put('t/acme/assets/logos/2024/main.png', Buffer.from('logo-bytes'), {
        contentType: 'image/png',
      });
      await node.infra.store.put('t/other/assets/secret.txt', Buffer.from('other tenant'), {
        contentType: 'text/plain',
      });
    });

    it('reads a multi-segment path inside the container', async () => {
      const r = await node.http.get('/files/acme/assets/logos/2024/main.png', { tenant: 'acme', token: bob });
      expect(r.status).toBe(200);
      expect(r.text).toBe('logo-bytes');
      expect(r.headers['content-type']).toBe('image/png');
      const ranged = await node.http.get('/files/acme/assets/logos/2024/main.png', {
        tenant: 'acme',
        token: bob,
        headers: { range: 'bytes=0-3' },
      });
      expect(ranged.status).toBe(206);
      expect(ranged.text).toBe('logo');
    });

    it('refuses traversal out of the container, plain or encoded', async () => {
      const attempts = [
        '/files/acme/assets/../../other/assets/secret.txt',
        '/files/acme/assets/logos/../../media/x',
        '/files/acme/assets/%2e%2e/%2e%2e/other/assets/secret.txt',
        '/files/acme/assets/..%2f..%2fother%2fassets%2fsecret.txt',
        '/files/acme/assets/%2e%2e%2f%2e%2e%2fother%2fassets%2fsecret.txt',
        '/files/acme/assets/..%5c..%5cother%5cassets%5csecret.txt',
        '/files/acme/assets/logos/%00/main.png',
        '/files/acme/assets/.staging/x',
        '/files/acme/assets/%252e%252e/%252e%252e/other/assets/secret.txt',
      ];
      for (const p of attempts) {
        const r = await request(node.url!, 'GET', p, { tenant: 'acme', token: bob, rawPath: true });
        expect(r.status).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(r.text).not.toBe('other tenant');
        expect(String(r.headers['content-type'])).toMatch(/problem\+json/);
      }
    });

    it('keeps private containers and other tenants out of reach', async () => {
      const imports = await node.http.get('/files/acme/imports/anything', { tenant: 'acme', token: bob });
      expect(imports.status).toBe(404);
      const other = await node.http.get('/files/other/assets/secret.txt', { tenant: 'acme', token: bob });
      expect(other.status).toBe(403);
      expect(other.body.code).toBe('wrong_tenant');
    });
  });
});
