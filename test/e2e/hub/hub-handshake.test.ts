import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';
import { createUser, loginFor, tokenFor } from '../../support/auth.js';
import { call, connectVia, HUB_TRANSPORTS, must, recorder, type HubClient } from '../../support/hub-client.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';

// Once per client transport: websocket only, socket.io-client's default (long-polling, then upgrade), polling only.
describe.each(HUB_TRANSPORTS)('hub handshake and negative acks (%s)', (transport) => {
  const connect = connectVia(transport);
  let node: TestNode;
  let clinician: string;
  let patient: string;
  let otherTenant: string;
  /** The event alice organizes with pat: its room is the one joinRoom / sayHiToRoom address. */
  let eventId: string;
  const open: HubClient[] = [];
  const track = (s: HubClient) => (open.push(s), s);

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    const patId = await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    await createUser(node, 'globex', { username: 'gina', role: 'clinician' });
    clinician = await tokenFor(node, 'acme', 'alice');
    patient = await tokenFor(node, 'acme', 'pat');
    otherTenant = await tokenFor(node, 'globex', 'gina');
    const host = await node.services.auth.verifyAccessToken('acme', clinician);
    const now = Date.now();
    const event = await node.services.events.create(host, {
      name: 'Ward round',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [{ userId: patId, role: 'participant' }],
      attachments: [],
    });
    eventId = String(event._id);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  it('accepts the token as auth.token and as the access_token query parameter', async () => {
    const a = track(await connect(node.url!, 'acme', { token: clinician }));
    const b = track(await connect(node.url!, 'acme', { token: patient, viaQuery: true }));
    expect(a.connected && b.connected).toBe(true);
    // Read once, not kept: the node's sockets hold no bearer token for their life (and no kilobyte each).
    const io = (node.roles.get('hub') as HubRoleHandle).io;
    for (const s of [a, b]) {
      const server = io.sockets.sockets.get(s.id!)!;
      expect(JSON.stringify([server.handshake.auth, server.handshake.query])).not.toMatch(/eyJ/);
    }
    // The connection still acts with its rights: a call that needs one of the role's permissions.
    expect(await call(a, 'getMeetingDetails', { eventId })).toMatchObject({ ok: true });
  });

  it('refuses handshakes without a token, with a bad token, another tenant token or an unknown tenant', async () => {
    await expect(connect(node.url!, 'acme')).rejects.toMatchObject({ data: { code: 'unauthenticated' } });
    await expect(connect(node.url!, 'acme', { token: 'not-a-token' })).rejects.toMatchObject({
      data: { code: 'token_invalid' },
    });
    await expect(connect(node.url!, 'acme', { token: otherTenant })).rejects.toMatchObject({
      data: { code: 'wrong_tenant' },
    });
    await expect(connect(node.url!, 'nobody', { token: clinician })).rejects.toMatchObject({
      data: { code: 'tenant_not_found' },
    });
  });

  it('answers methods without permission, malformed payloads and unknown calls with coded acks', async () => {
    const pat = track(await connect(node.url!, 'acme', { token: patient }));
    const denied = await call(pat, 'initEvent', { eventId: 'a'.repeat(24) });
    expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    const bad = await call(pat, 'initCall', { calleeIds: ['nope'] });
    expect(bad).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect((bad as any).error.errors[0].field).toMatch(/^args\.0\.calleeIds/);
    const garbage = await call(pat, 'acceptCall', 'x', 42, null);
    expect(garbage).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    const missing = await call(pat, 'acceptCall', { callId: '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6d' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'call_not_found' } });
    expect(pat.connected).toBe(true);
  });

  it('keeps tenants apart: another tenant cannot reach a call by its id', async () => {
    const alice = track(await connect(node.url!, 'acme', { token: clinician }));
    const pat = (await node.services.auth.verifyAccessToken('acme', patient)).userId;
    const acmeCall = (await call(alice, 'initCall', { calleeIds: [pat] })) as any;
    expect(acmeCall.ok).toBe(true);
    const gina = track(await connect(node.url!, 'globex', { token: otherTenant }));
    expect(await call(gina, 'acceptCall', { callId: acmeCall.data.callId })).toMatchObject({
      ok: false,
      error: { code: 'call_not_found' },
    });
    expect(await call(gina, 'endCall', { callId: acmeCall.data.callId })).toMatchObject({
      ok: false,
      error: { code: 'call_not_found' },
    });
    await call(alice, 'cancelCall', { callId: acmeCall.data.callId });
  });

  it('counts method calls by outcome in the metrics', async () => {
    const m = await request(node.metricsUrl, 'GET', '/metrics');
    expect(m.text).toMatch(/hub_method_calls_total\{[^}]*method="initEvent"[^}]*outcome="permission_denied"/);
  });

  it('refuses signalling to someone who is not in the same call', async () => {
    const alice = track(await connect(node.url!, 'acme', { token: clinician }));
    const r = await call(alice, 'offer', {
      targetUserId: 'b'.repeat(24),
      callId: '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6e',
      sdp: 'v=0',
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const both = await call(alice, 'offer', { targetUserId: 'b'.repeat(24), sdp: 'v=0' });
    expect(both).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
  });

  it('rate-limits a flooding socket with retryAfter and keeps serving others', async () => {
    const flood = track(await connect(node.url!, 'acme', { token: patient }));
    const acks = await Promise.all(Array.from({ length: 120 }, () => call(flood, 'joinRoom', eventId)));
    const limited = acks.filter((a) => !a.ok);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfter: expect.any(Number) } });
    const other = track(await connect(node.url!, 'acme', { token: clinician }));
    expect(await call(other, 'joinRoom', eventId)).toMatchObject({ ok: true });
  });

  it('greets a room only when joined, and only its members hear it', async () => {
    const a = track(await connect(node.url!, 'acme', { token: clinician }));
    const b = track(await connect(node.url!, 'acme', { token: patient }));
    const rb = recorder(b);
    expect(await call(a, 'sayHiToRoom', eventId)).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    await must(b, 'joinRoom', eventId);
    await must(a, 'joinRoom', eventId);
    expect(await call(a, 'sayHiToRoom', eventId)).toMatchObject({ ok: true });
    expect(await rb.next('sayHi')).toMatchObject({ roomId: eventId, from: { username: 'alice' } });
  });

  it('disconnects the sockets of a revoked session and refuses its token afterwards', async () => {
    const login = await loginFor(node, 'acme', 'pat');
    const kept = track(await connect(node.url!, 'acme', { token: patient }));
    const doomed = track(await connect(node.url!, 'acme', { token: login.accessToken }));
    const reason = new Promise<string>((r) => doomed.once('disconnect', (why) => r(why)));
    await node.services.auth.sessions.revoke('acme', { ids: [login.sessionId] }, 'test');
    expect(await reason).toBe('io server disconnect');
    expect(kept.connected).toBe(true);
    await expect(connect(node.url!, 'acme', { token: login.accessToken })).rejects.toMatchObject({
      data: { code: 'session_revoked' },
    });
  });
});
