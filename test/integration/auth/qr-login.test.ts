import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';

describe('QR login code: create, poll, approve, redeem, extend, expire, reuse', () => {
  let node: TestNode;
  let webToken: string;

  beforeAll(async () => {
    node = await startTestNode();
    await createUser(node, 'acme', { username: 'alice', role: 'clinician', displayName: 'Alice' });
    webToken = await tokenFor(node, 'acme', 'alice');
  });
  afterAll(async () => node.destroy());

  const create = async () => {
    const r = await node.http.get('/api/account/qrCode?deviceName=Ward%203%20headset', { tenant: 'acme' });
    expect(r.status).toBe(201);
    return r.body as { code: string; pollSecret: string; expiresAt: string; qrCode: string; approveUrl: string };
  };
  const poll = (code: string, pollSecret: string) =>
    node.http.post('/api/account/login', { tenant: 'acme', body: { method: 'qr', code, pollSecret } });

  it('goes pending -> approved -> redeemed once, signing the device in as the approver', async () => {
    const c = await create();
    expect(c.qrCode).toMatch(/^data:image\/png;base64,/);
    expect(c.approveUrl).toContain(c.code);
    const pending = await poll(c.code, c.pollSecret);
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('login_code_pending');
    expect(pending.headers['retry-after']).toBeDefined();
    const anon = await node.http.post('/api/account/approveLoginCode', { tenant: 'acme', body: { code: c.code } });
    expect(anon.status).toBe(401);
    const approved = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'acme',
      token: webToken,
      body: { code: c.code },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', deviceName: 'Ward 3 headset' });
    const stolen = await poll(c.code, 'x'.repeat(32));
    expect(stolen.body.code).toBe('login_code_not_found');
    const redeemed = await poll(c.code, c.pollSecret);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body.user.username).toBe('alice');
    // The sign-in is audited once, with its method and the device it signed in.
    expect(
      (await node.services.auth.audit.list('acme', { action: 'signin.success', subjectId: redeemed.body.user.id }))
        .map((a) => a.details)
        .filter((d) => d?.method === 'qr'),
    ).toEqual([{ method: 'qr', deviceName: 'Ward 3 headset' }]);
    expect((await node.http.get('/api/tenant/ping', { tenant: 'acme', token: redeemed.body.accessToken })).status).toBe(
      200,
    );
    const reuse = await poll(c.code, c.pollSecret);
    expect(reuse.status).toBe(409);
    expect(reuse.body.code).toBe('login_code_used');
    const twice = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'acme',
      token: webToken,
      body: { code: c.code },
    });
    expect(twice.body.code).toBe('login_code_used');
  });

  it('extends a pending code for its poller only, and refuses expired codes', async () => {
    const c = await create();
    const ext = await node.http.post('/api/account/extendLoginCode', {
      tenant: 'acme',
      body: { code: c.code, pollSecret: c.pollSecret },
    });
    expect(ext.status).toBe(200);
    expect(new Date(ext.body.expiresAt).getTime()).toBeGreaterThanOrEqual(new Date(c.expiresAt).getTime());
    const other = await node.http.post('/api/account/extendLoginCode', {
      tenant: 'acme',
      body: { code: c.code, pollSecret: 'y'.repeat(32) },
    });
    expect(other.status).toBe(404);
    const { db } = await node.services.tenants.require('acme');
    await db.models.LoginCode.updateOne({ code: c.code }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const late = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'acme',
      token: webToken,
      body: { code: c.code },
    });
    expect(late.status).toBe(410);
    expect(late.body.code).toBe('login_code_expired');
    expect((await poll(c.code, c.pollSecret)).body.code).toBe('login_code_expired');
    const lateExt = await node.http.post('/api/account/extendLoginCode', {
      tenant: 'acme',
      body: { code: c.code, pollSecret: c.pollSecret },
    });
    expect(lateExt.body.code).toBe('login_code_expired');
  });

  it('validates input with field names and does not find codes across tenants', async () => {
    const bad = await node.http.post('/api/account/login', {
      tenant: 'acme',
      body: { method: 'qr', code: '!!', pollSecret: 'short' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['code', 'pollSecret']),
    );
    const unknown = await node.http.post('/api/account/login', { tenant: 'acme', body: { method: 'magic' } });
    expect(unknown.status).toBe(400);
    const c = await create();
    await createUser(node, 'globex', { username: 'gina', role: 'clinician' });
    const foreign = await node.http.post('/api/account/approveLoginCode', {
      tenant: 'globex',
      token: await tokenFor(node, 'globex', 'gina'),
      body: { code: c.code },
    });
    expect(foreign.status).toBe(404);
  });
});
