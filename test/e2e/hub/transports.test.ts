import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { openPolling, pollingPath, pollUntil } from '../../support/engine-io.js';
import { request } from '../../support/http.js';
import { call, connect, must, recorder, transportOf, upgraded, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/**
 * Outside clients with their default settings against a node running as a process of its own (so a
 * crash is a process exit, as in production): raw long-polling requests as curl sends them, and
 * socket.io-client with its default transports (long-polling first, then the upgrade to websocket).
 */
describe('hub over HTTP long-polling and the websocket upgrade', () => {
  const id = uniqueId();
  const shared = { MONGODB_CATALOG_DB: `tc_${id}`, MONGODB_TENANT_DB_PREFIX: `tt_${id}_`, REDIS_PREFIX: `test:${id}:` };
  let admin: TestNode;
  let child: ChildNode;
  let url: string;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const open: HubClient[] = [];
  const track = (s: HubClient) => (open.push(s), s);

  beforeAll(async () => {
    // The in-process node only creates users and tokens; the hub under test is the child process.
    admin = await startTestNode({ ...shared, ROLES: 'http' });
    for (const [u, role] of [
      ['alice', 'clinician'],
      ['pat', 'patient'],
    ] as const) {
      ids[u] = await createUser(admin, 'acme', { username: u, role });
      tokens[u] = await tokenFor(admin, 'acme', u);
    }
    child = await spawnChildNode(testEnv({ ...shared, ROLES: 'http,hub,actors', NODE_ID: `transports-${id}` }), 60_000);
    url = child.url;
  }, 90_000);
  afterAll(async () => {
    for (const s of open) s.close();
    if (child && child.proc.exitCode === null) await child.stop();
    await admin?.destroy();
  });

  /** The child answers /healthz and has not exited. */
  async function expectAlive(): Promise<void> {
    expect(child.proc.exitCode).toBeNull();
    expect((await request(url, 'GET', '/healthz')).status).toBe(200);
  }

  it('answers the polling handshake of a plain HTTP client again and again, with engine.io alone answering', async () => {
    for (let i = 0; i < 6; i++) {
      const r = await request(url, 'GET', pollingPath(), { tenant: 'acme' });
      expect(r.status).toBe(200);
      expect(r.text).toMatch(/^0\{"sid":"[\w-]+","upgrades":\["websocket"\]/);
    }
    const together = await Promise.all(
      Array.from({ length: 6 }, () => request(url, 'GET', pollingPath(), { tenant: 'acme' })),
    );
    expect(together.map((r) => r.status)).toEqual(Array(6).fill(200));
    await expectAlive();
  });

  it('holds a whole Socket.IO conversation over plain long-polling requests: connect, call with ack, push', async () => {
    const alice = await openPolling(url, 'acme');
    const pat = await openPolling(url, 'acme');
    expect((await alice.post(`40${JSON.stringify({ token: tokens.alice })}`)).status).toBe(200);
    expect((await pat.post(`40${JSON.stringify({ token: tokens.pat })}`)).status).toBe(200);
    expect(await pollUntil(alice, (p) => p.startsWith('40'))).toMatch(/^40\{"sid":/);
    expect(await pollUntil(pat, (p) => p.startsWith('40'))).toMatch(/^40\{"sid":/);
    await alice.post(`421${JSON.stringify(['initCall', { calleeIds: [ids.pat] }])}`);
    const ack = JSON.parse((await pollUntil(alice, (p) => p.startsWith('431'))).slice(3)) as [
      { ok: boolean; data: { callId: string } },
    ];
    expect(ack[0]).toMatchObject({ ok: true, data: { status: 'ringing', callerId: ids.alice } });
    const push = JSON.parse((await pollUntil(pat, (p) => p.startsWith('42["onNewCall"'))).slice(2)) as [
      string,
      { call: { callId: string } },
    ];
    expect(push[1].call.callId).toBe(ack[0].data.callId);
    await expectAlive();
  });

  it('refuses a long-polling CONNECT without a token with a coded error and stays up', async () => {
    const anon = await openPolling(url, 'acme');
    await anon.post('40');
    const refusal = await pollUntil(anon, (p) => p.startsWith('44'));
    expect(JSON.parse(refusal.slice(2))).toMatchObject({ data: { code: 'unauthenticated' } });
    await expectAlive();
  });

  it('connects socket.io-client with its default transports, upgrades to websocket, and serves calls and pushes', async () => {
    await expect(connect(url, 'acme', { transport: 'default' })).rejects.toMatchObject({
      data: { code: 'unauthenticated' },
    });
    await expect(connect(url, 'acme', { transport: 'default' })).rejects.toMatchObject({
      data: { code: 'unauthenticated' },
    });
    const alice = track(await connect(url, 'acme', { transport: 'default', token: tokens.alice }));
    const pat = track(await connect(url, 'acme', { transport: 'polling', token: tokens.pat }));
    await upgraded(alice);
    expect(transportOf(alice)).toBe('websocket');
    expect(transportOf(pat)).toBe('polling');
    const rp = recorder(pat);
    const info = await must(alice, 'initCall', { calleeIds: [ids.pat] });
    expect((await rp.next('onNewCall', (p) => p.call.callId === info.callId)).call.callerId).toBe(ids.alice);
    expect(await call(pat, 'acceptCall', { callId: info.callId })).toMatchObject({
      ok: true,
      data: { status: 'active' },
    });
    await expectAlive();
  });
});
