import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
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

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    await createUser(node, 'acme', { username: 'hs', role: 'device', kind: 'device' });
  });
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
    const headset = await hub('hs');
    const real = await call(headset, 'initRapidConnect', 'HS-REAL-1', event.body.meetingCode);
    expect(real).toMatchObject({ ok: true, data: { deviceId: 'HS-REAL-1', meetingId: event.body.id } });
  });
});
