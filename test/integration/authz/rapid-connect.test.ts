import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, registerHardware, tokenFor } from '../../support/auth.js';
import { call, connect, type HubClient } from '../../support/hub-client.js';
import { inHours } from '../../support/events.js';

/** Rapid connect creates and hosts an event, and registers hardware ids: only the roles meant to do so may. */
describe('rapid connect: who may host and who may register a headset', () => {
  let node: TestNode;
  const open: HubClient[] = [];
  const hub = async (user: string) => {
    const s = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', user) });
    open.push(s);
    return s;
  };

  const ids: Record<string, string> = {};
  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    ids.alice = await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    await createUser(node, 'acme', { username: 'ada', role: 'admin' });
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    ids.hs = await createUser(node, 'acme', { username: 'hs', role: 'device', kind: 'device' });
    ids.rogue = await createUser(node, 'acme', { username: 'rogue', role: 'device', kind: 'device' });
  });
  const rest = async (user: string, path: string, body?: unknown) =>
    node.http.post(path, { tenant: 'acme', token: await tokenFor(node, 'acme', user), body });
  const ward = async () => {
    const r = await rest('alice', '/api/events/create', { name: 'Ward round', startAt: inHours(0), endAt: inHours(1) });
    expect(r.status).toBe(201);
    return r.body as { id: string; meetingCode: string };
  };
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it('POST /api/meetings/startRapidConnect/{deviceId} is refused to patients and device accounts, and served to clinicians', async () => {
    const alice = await tokenFor(node, 'acme', 'alice');
    const types = (await node.http.get('/api/peripheral/types', { tenant: 'acme', token: alice })).body;
    const headset = types.find((t: { key: string }) => t.key === 'headset');
    const mapped = await node.http.post(`/api/peripheral/getDevice/${headset.id}`, {
      tenant: 'acme',
      token: alice,
      body: { physicalIds: ['SN-RC-9'], name: 'Ward 9 headset' },
    });
    expect(mapped.status).toBe(200);
    const deviceId = mapped.body.device.id as string;
    for (const user of ['pat', 'hs']) {
      const r = await node.http.post(`/api/meetings/startRapidConnect/${deviceId}`, {
        tenant: 'acme',
        token: await tokenFor(node, 'acme', user),
      });
      expect({ user, status: r.status, code: r.body.code }).toEqual({ user, status: 403, code: 'permission_denied' });
    }
    const ok = await node.http.post(`/api/meetings/startRapidConnect/${deviceId}`, { tenant: 'acme', token: alice });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ role: 'host', host: { userId: expect.any(String) } });
  });

  it('a patient holding a join code cannot register a hardware id (initRapidConnect); the real headset then can', async () => {
    const alice = await tokenFor(node, 'acme', 'alice');
    const event = await node.http.post('/api/events/create', {
      tenant: 'acme',
      token: alice,
      body: { name: 'Ward round', startAt: inHours(0), endAt: inHours(1) },
    });
    expect(event.status).toBe(201);
    const pat = await hub('pat');
    const squat = await call(pat, 'initRapidConnect', 'HS-REAL-1', event.body.meetingCode);
    expect(squat).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await registerHardware(node, 'acme', 'HS-REAL-1', ids.hs!);
    const headset = await hub('hs');
    const real = await call(headset, 'initRapidConnect', 'HS-REAL-1', event.body.meetingCode);
    expect(real).toMatchObject({ ok: true, data: { deviceId: 'HS-REAL-1', meetingId: event.body.id } });
  });

  it('a device account cannot claim a hardware id nobody registered to it; an administrator registers it, or a clinician enters the code the device shows', async () => {
    const event = await ward();
    // Unregistered: no device account claims it, and the real headset is not locked out by the attempt.
    const rogue = await hub('rogue');
    expect(await call(rogue, 'initRapidConnect', 'HS-WARD-7', event.meetingCode)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    // An administrator registers it to the headset's account over REST; only a device account may hold one.
    expect(
      (await rest('alice', '/api/peripheral/registrations', { hardwareId: 'HS-WARD-7', accountId: ids.hs })).status,
    ).toBe(403);
    const notDevice = await rest('ada', '/api/peripheral/registrations', {
      hardwareId: 'HS-WARD-7',
      accountId: ids.alice,
    });
    expect({ status: notDevice.status, code: notDevice.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const reg = await rest('ada', '/api/peripheral/registrations', { hardwareId: 'HS-WARD-7', accountId: ids.hs });
    expect(reg.status).toBe(200);
    expect(reg.body).toMatchObject({ hardwareId: 'HS-WARD-7', accountId: ids.hs, via: 'admin' });
    const taken = await rest('ada', '/api/peripheral/registrations', { hardwareId: 'HS-WARD-7', accountId: ids.rogue });
    expect({ status: taken.status, code: taken.body.code }).toEqual({ status: 409, code: 'conflict' });
    expect(await call(rogue, 'initRapidConnect', 'HS-WARD-7', event.meetingCode)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    const headset = await hub('hs');
    expect(await call(headset, 'initRapidConnect', 'HS-WARD-7', event.meetingCode)).toMatchObject({
      ok: true,
      data: { deviceId: 'HS-WARD-7', meetingId: event.id },
    });

    // Pairing: the device asks for a code and shows it; a device account cannot enter it, a clinician can.
    const code = await rest('rogue', '/api/peripheral/pairingCode', { hardwareId: 'HS-CART-2' });
    expect(code.status).toBe(200);
    expect(code.body).toMatchObject({ registered: false, pairingCode: expect.stringMatching(/^[A-Z2-9]{8}$/) });
    expect((await rest('rogue', '/api/peripheral/pair', { pairingCode: code.body.pairingCode })).status).toBe(403);
    const wrong = await rest('alice', '/api/peripheral/pair', { pairingCode: 'ABCDEFGH' });
    expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 404, code: 'not_found' });
    const paired = await rest('alice', '/api/peripheral/pair', { pairingCode: code.body.pairingCode });
    expect(paired.body).toMatchObject({ hardwareId: 'HS-CART-2', accountId: ids.rogue, via: 'pairing' });
    expect((await rest('alice', '/api/peripheral/pair', { pairingCode: code.body.pairingCode })).status).toBe(404);
    expect(await call(rogue, 'initRapidConnect', 'HS-CART-2', event.meetingCode)).toMatchObject({ ok: true });
    // A hardware id registered to another account cannot even be offered for pairing.
    const other = await rest('rogue', '/api/peripheral/pairingCode', { hardwareId: 'HS-WARD-7' });
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 409, code: 'conflict' });
    expect((await rest('rogue', '/api/peripheral/pairingCode', { hardwareId: 'HS-CART-2' })).body).toEqual({
      registered: true,
    });

    // Removing the registration ends the right to claim it anew; both changes are audited.
    expect((await rest('ada', '/api/peripheral/registrations/delete', { hardwareId: 'HS-CART-2' })).status).toBe(200);
    const again = await hub('rogue');
    expect(await call(again, 'initRapidConnect', 'HS-CART-2', event.meetingCode)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    const audited = await node.services.auth.audit.list('acme', { action: 'device.register' });
    expect(audited.length).toBeGreaterThanOrEqual(2);
  });
});
