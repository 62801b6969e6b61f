import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { as, world, type World } from './fixtures.js';
import { multipart, type FormPart } from '../../support/form.js';

/** 1x1 PNG. */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

/** The fields (and file) as the multipart body a client sends. */
function form(fields: Record<string, string>, file?: { name: string; filename: string; type: string; body: Buffer }) {
  const parts: FormPart[] = Object.entries(fields).map(([name, value]) => ({ name, value }));
  if (file)
    parts.push({ name: file.name, file: { fileName: file.filename, content: file.body, contentType: file.type } });
  const { body, headers } = multipart(parts);
  return { rawBody: body, headers };
}

describe('POST /api/contacts/update (multipart)', () => {
  let w: World;
  beforeAll(async () => {
    w = await world('cua', 'cub');
  });
  afterAll(async () => w.node.destroy());

  const post = (token: string, body: ReturnType<typeof form>) =>
    w.node.http.post('/api/contacts/update', { tenant: w.tenantA, token, ...body });

  it('updates profile fields and re-buckets the name', async () => {
    const r = await post(
      w.a.pat.token,
      form({ displayName: 'Zoe Patient', phone: '+44 20 1234', department: 'Cardiology' }),
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: w.a.pat.id,
      displayName: 'Zoe Patient',
      initial: 'Z',
      phone: '+44 20 1234',
      department: 'Cardiology',
      avatarUrl: null,
    });
    const found = await as(w, w.a.alice).get('/api/contacts/get?alphabet=Z');
    expect(found.body.items.map((c: { id: string }) => c.id)).toEqual([w.a.pat.id]);
  });

  it('stores the avatar under its content hash in the tenant assets container', async () => {
    const r = await post(w.a.pat.token, form({}, { name: 'avatar', filename: 'me.png', type: 'image/png', body: PNG }));
    expect(r.status).toBe(200);
    const hash = createHash('sha256').update(PNG).digest('hex');
    expect(r.body.avatarUrl).toBe(`/files/${w.tenantA}/assets/avatars/${hash}`);
    expect(await w.node.infra.store.head(`t/${w.tenantA}/assets/avatars/${hash}`)).toMatchObject({ size: PNG.length });
    const img = await w.node.http.get(r.body.avatarUrl, { tenant: w.tenantA, token: w.a.alice.token });
    expect(img.status).toBe(200);
    expect(img.raw.equals(PNG)).toBe(true);
  });

  it('refuses non-images, oversized avatars, bad fields and non-multipart bodies', async () => {
    const txt = await post(
      w.a.pat.token,
      form({}, { name: 'avatar', filename: 'a.png', type: 'image/png', body: Buffer.from('not an image') }),
    );
    expect(txt.status).toBe(415);
    expect(txt.body.errors[0].field).toBe('avatar');
    const big = await post(
      w.a.pat.token,
      form(
        {},
        {
          name: 'avatar',
          filename: 'a.png',
          type: 'image/png',
          body: Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024 + 10)]),
        },
      ),
    );
    expect(big.status).toBe(413);
    const bad = await post(w.a.pat.token, form({ email: 'not-an-email' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('email');
    const json = await w.node.http.post('/api/contacts/update', {
      tenant: w.tenantA,
      token: w.a.pat.token,
      body: { displayName: 'x' },
    });
    expect(json.status).toBe(415);
    expect(
      (await w.node.http.post('/api/contacts/update', { tenant: w.tenantA, ...form({ displayName: 'x' }) })).status,
    ).toBe(401);
    expect((await post(w.a.dev.token, form({ displayName: 'x' }))).status).toBe(403);
  });
});
