import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png } from '../../support/form.js';

/** The whole media flow on the S3 driver: upload, dedup, thumbnail job, ranged download, container files. */
describe('media over the S3 driver', () => {
  let s3: TestS3;
  let node: TestNode;
  let token: string;

  const upload = (fileName: string, content: Buffer) => {
    const { body, headers } = multipart([{ name: 'file', file: { fileName, content } }]);
    return node.http.post('/api/media/upload', { tenant: 'acme', token, rawBody: body, headers });
  };

  beforeAll(async () => {
    s3 = await startTestS3();
    node = await startTestNode({ ROLES: 'http,workers', ...s3.env });
    await createUser(node, 'acme', { username: 'sam', role: 'clinician' });
    token = await tokenFor(node, 'acme', 'sam');
  });
  afterAll(async () => {
    await node?.destroy();
    await s3?.stop();
  });

  it('stores uploads content-addressed in the bucket and serves ranges', async () => {
    const content = Buffer.from(`%PDF-1.6\n${'abcdefghij'.repeat(50)}`);
    const hash = createHash('sha256').update(content).digest('hex');
    const first = await upload('doc.pdf', content);
    const second = await upload('copy.pdf', content);
    expect(first.status).toBe(201);
    expect(second.body.data.hash).toBe(hash);
    expect(await node.infra.store.head(`t/acme/media/${hash}`)).toMatchObject({
      size: content.length,
      etag: hash,
      contentType: 'application/pdf',
    });
    const part = await node.http.get(`/api/media/download/acme/${hash}`, {
      tenant: 'acme',
      token,
      headers: { range: 'bytes=9-18' },
    });
    expect(part.status).toBe(206);
    expect(part.raw.equals(content.subarray(9, 19))).toBe(true);
    const cached = await node.http.get(`/media/download/acme/${hash}`, {
      tenant: 'acme',
      token,
      headers: { 'if-none-match': `"${hash}"` },
    });
    expect(cached.status).toBe(304);
  });

  it('refuses a renamed executable before anything reaches the bucket', async () => {
    const r = await upload('x.png', Buffer.concat([Buffer.from('MZ'), Buffer.alloc(100)]));
    expect(r.status).toBe(415);
  });

  it('thumbnails images through the worker and serves them from the bucket', async () => {
    const up = await upload('scan.png', await png(300, 150));
    const job = await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${up.body.data.hash}`);
    expect(job.state).toBe('completed');
    const thumb = await node.http.get(`/files/acme/thumbnails/${up.body.data.hash}.webp`, { tenant: 'acme', token });
    expect(thumb.status).toBe(200);
    expect(await sharp(thumb.raw).metadata()).toMatchObject({ format: 'webp', width: 300, height: 150 });
  });
});
