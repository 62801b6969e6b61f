import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { deflateSync } from 'node:zlib';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { multipart, png, type FormPart } from '../../support/form.js';
import { zipOf } from '../../support/zip.js';
import { breach } from './kit.js';

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A tiny, well-formed PNG whose header claims width x height pixels (a decompression bomb by declaration). */
function pixelBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('hostile uploads and spreadsheets', () => {
  let node: TestNode;
  let admin: string;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,workers' });
    await createUser(node, 'upl', { username: 'ada', role: 'admin' });
    admin = await tokenFor(node, 'upl', 'ada');
  });
  afterAll(async () => node?.destroy());

  const post = (route: string, parts: FormPart[]) => {
    const { body, headers } = multipart(parts);
    return node.http.post(route, { tenant: 'upl', token: admin, rawBody: body, headers });
  };
  const upload = (fileName: string, content: Buffer) =>
    post('/api/media/upload', [
      { name: 'clientRef', value: `ref-${fileName}-${content.length}-${Math.random()}` },
      { name: 'file', file: { fileName, content } },
    ]);
  const refused = (r: { status: number; body: any; headers: any; text: string; raw: Buffer }) => ({
    coded4xx: r.status >= 400 && r.status < 500 && !breach(r),
  });

  it('refuses wrong magic bytes and polyglots with coded 4xx', async () => {
    const image = await png(8, 8);
    const cases: [string, Buffer][] = [
      ['photo.png', Buffer.from('MZ\x90\x00\x03\x00\x00\x00 this program cannot be run in DOS mode')],
      ['photo.jpg', image],
      ['scan.pdf', Buffer.from('\x7fELF\x02\x01\x01\x00')],
      ['photo.png', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>')],
      ['page.html', Buffer.concat([image, Buffer.from('<html><script>alert(1)</script></html>')])],
      ['archive.png', Buffer.concat([Buffer.from('PK\x03\x04'), image])],
      ['notes.txt', Buffer.concat([Buffer.from('#!/bin/sh\nrm -rf /\n')])],
      ['photo.png.exe', image],
      ['..%2f..%2fphoto.png', Buffer.from('MZ')],
    ];
    for (const [name, content] of cases)
      expect({ name, ...refused(await upload(name, content)) }).toEqual({ name, coded4xx: true });
  });

  it('serves a GIF/script polyglot (valid GIF magic, so stored) only as an inert image: nosniff and a sandbox CSP', async () => {
    const r = await upload('photo.gif', Buffer.from('GIF89a/*\x00\x00*/=1;alert(document.domain)//'));
    expect(r.status).toBe(201);
    const dl = await node.http.get(r.body.data.url, { tenant: 'upl', token: admin });
    expect(dl.status).toBe(200);
    expect(String(dl.headers['content-type'])).toMatch(/^image\/gif/);
    expect(dl.headers['x-content-type-options']).toBe('nosniff');
    expect(String(dl.headers['content-security-policy'])).toMatch(/sandbox/);
  });

  it('refuses an upload above the tenant size limit with 413 payload_too_large', async () => {
    const settings = node.infra.mongo.tenantDb('upl').models.TenantConfig;
    await settings.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': 64 * 1024 } });
    try {
      const r = await upload('big.png', Buffer.concat([await png(8, 8), Buffer.alloc(256 * 1024, 1)]));
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 413, code: 'payload_too_large' });
    } finally {
      await settings.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': 100 * 1024 * 1024 } });
    }
  });

  it('never decodes a pixel bomb: the upload is stored (its header is a valid PNG), its thumbnail fails and is refused with a code', async () => {
    const r = await upload('bomb.png', pixelBomb(100_000, 100_000));
    expect(r.status).toBe(201);
    const job = await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.upl.${r.body.data.hash}`, 30_000);
    expect(job.state).toBe('failed');
    expect(job.failedReason).toMatch(/pixel/i);
    const thumb = await node.http.get(`/api/media/thumbnail/upl/${r.body.data.hash}`, { tenant: 'upl', token: admin });
    expect({ status: thumb.status, code: thumb.body.code }).toEqual({ status: 409, code: 'thumbnail_not_ready' });
    expect((await node.http.get('/healthz')).status).toBe(200);
  });

  const runImport = async (content: Buffer) => {
    const up = await post('/api/uploads/pendingUsers', [{ name: 'file', file: { fileName: 'users.xlsx', content } }]);
    expect(up.status).toBe(202);
    await node.infra.queues.waitUntilFinished('pending-user-import', `import.upl.${up.body.importId}`, 60_000);
    const status = await node.http.get(`/api/uploads/pendingUsers/${up.body.importId}`, {
      tenant: 'upl',
      token: admin,
    });
    return status.body;
  };

  it('fails the import of a malformed zip container or XML part with a coded reason, at once, and answers its status', async () => {
    const sheet = Buffer.from('<worksheet><sheetData><row r="1"/></sheetData></worksheet>');
    const good = zipOf([{ name: 'xl/worksheets/sheet1.xml', data: sheet }]);
    const eocd = good.length - 22;
    const cd = good.readUInt32LE(eocd + 16);
    const edited = (edit: (b: Buffer) => void) => {
      const b = Buffer.from(good);
      edit(b);
      return b;
    };
    const part = (xml: string) => zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.from(xml) }]);
    const hostile = [
      edited((b) => b.writeUInt32LE(0x12345678, cd)), // directory entry signature
      edited((b) => b.writeUInt32LE(good.length + 100, eocd + 16)), // directory past the end
      edited((b) => b.writeUInt16LE(0xffff, cd + 28)), // a name running past the directory
      Buffer.concat([good, Buffer.from('trailing bytes')]),
      zipOf([{ name: '../../etc/passwd', data: sheet }]),
      good.subarray(0, good.length - 30),
      part('<!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><worksheet>&b;</worksheet>'),
      part(`<worksheet>${'<x>'.repeat(1000)}</worksheet>`),
    ];
    for (const [i, file] of hostile.entries()) {
      const up = await post('/api/uploads/pendingUsers', [
        { name: 'file', file: { fileName: 'users.xlsx', content: file } },
      ]);
      expect({ i, status: up.status }).toEqual({ i, status: 202 });
      const job = await node.infra.queues.waitUntilFinished(
        'pending-user-import',
        `import.upl.${up.body.importId}`,
        60_000,
      );
      expect({ i, state: job.state, attempts: job.attemptsMade }).toEqual({ i, state: 'failed', attempts: 1 });
      const status = await node.http.get(`/api/uploads/pendingUsers/${up.body.importId}`, {
        tenant: 'upl',
        token: admin,
      });
      expect({ i, http: status.status, status: status.body.status, error: typeof status.body.error }).toEqual({
        i,
        http: 200,
        status: 'failed',
        error: 'string',
      });
      expect(status.body.error).toMatch(/workbook/i);
    }
    expect((await node.http.get('/healthz')).status).toBe(200);
  }, 180_000);

  it('accepts spreadsheet bombs (zip bombs, lying sizes, huge dimensions) for import, then fails the import without inflating them', async () => {
    const bombs = [
      zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(40 * 1024 * 1024) }]),
      zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(8 * 1024 * 1024, 0x20), declaredSize: 10 }]),
      zipOf(
        Array.from({ length: 3000 }, (_, i) => ({
          name: `xl/worksheets/sheet${i}.xml`,
          data: Buffer.from('<worksheet/>'),
        })),
      ),
      zipOf([
        {
          name: '[Content_Types].xml',
          data: Buffer.from(
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
          ),
        },
        {
          name: 'xl/workbook.xml',
          data: Buffer.from('<workbook><sheets><sheet name="a" sheetId="1"/></sheets></workbook>'),
        },
        {
          name: 'xl/worksheets/sheet1.xml',
          data: Buffer.from(
            '<worksheet><dimension ref="A1:XFD1048576"/><sheetData><row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row></sheetData></worksheet>',
          ),
        },
      ]),
    ];
    for (const [i, bomb] of bombs.entries()) {
      const r = await runImport(bomb);
      expect({ i, status: r.status }).toEqual({ i, status: 'failed' });
    }
    expect((await node.http.get('/healthz')).status).toBe(200);
  }, 180_000);
});
