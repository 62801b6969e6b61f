import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jwtVerify } from 'jose';
import { LiveKitVcs, grantFor } from './livekit.adapter.js';

describe('LiveKit adapter token minting (no network)', () => {
  const vcs = new LiveKitVcs({
    url: 'wss://media.invalid',
    apiKey: 'APIkey123',
    apiSecret: 'a-secret-of-at-least-32-characters!!',
  });
  const room = { provider: 'livekit', roomName: 'consult-acme-0123456789abcdef01234567', url: 'wss://media.invalid' };

  it('mints a join token signed with the API secret, for the room and identity, with role grants', async () => {
    const d = await vcs.joinDetails('acme', room, { identity: 'u1', name: 'Dr Who', role: 'host' });
    const { payload } = await jwtVerify(d.token, new TextEncoder().encode('a-secret-of-at-least-32-characters!!'));
    expect(payload).toMatchObject({
      iss: 'APIkey123',
      sub: 'u1',
      name: 'Dr Who',
      video: { room: room.roomName, roomJoin: true, roomAdmin: true, roomRecord: true },
    });
    expect(JSON.parse(String(payload.metadata))).toEqual({ tenant: 'acme', role: 'host' });
    expect(d.url).toBe('wss://media.invalid');
    expect(Date.parse(d.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('gives guests no admin or record grant, and a token is refused with another secret', async () => {
    expect(grantFor('r', 'guest')).toMatchObject({ roomJoin: true, roomAdmin: false, roomRecord: false });
    const d = await vcs.joinDetails('acme', room, { identity: 'guest:1', name: 'G', role: 'guest' });
    await expect(
      jwtVerify(d.token, new TextEncoder().encode('another-secret-of-32-characters!!!!!')),
    ).rejects.toThrow();
  });
});

/**
 * removeParticipant is a RoomService call, so it needs a server. No LiveKit server runs here (its other
 * server calls, createRoom, closeRoom and the egress ones, have no test against one either); this test
 * serves the RoomService's HTTP endpoint on loopback and checks what the adapter sends and how it reads
 * the answers LiveKit documents: the request (room, identity, revokeTokenTs this second), its bearer token
 * (signed with the API secret, roomAdmin on that room), and a 404 `not_found` taken as removed already.
 */
describe('LiveKit adapter removeParticipant (RoomService over loopback)', () => {
  const secret = 'a-secret-of-at-least-32-characters!!';
  const room = { provider: 'livekit', roomName: 'consult-acme-0123456789abcdef01234567', url: '' };
  let server: Server;
  let url = '';
  const seen: { path: string; auth: string; body: Record<string, unknown> }[] = [];
  let answer: { status: number; body: unknown } = { status: 200, body: {} };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        seen.push({ path: req.url!, auth: String(req.headers.authorization), body: JSON.parse(raw || '{}') });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('asks RemoveParticipant for the identity, revoking its tokens from this second, as room admin', async () => {
    const vcs = new LiveKitVcs({ url, apiKey: 'APIkey123', apiSecret: secret });
    const before = Math.floor(Date.now() / 1000);
    await vcs.removeParticipant('acme', room, 'device:abc');
    const req = seen.at(-1)!;
    expect(req.path).toBe('/twirp/livekit.RoomService/RemoveParticipant');
    expect(req.body).toMatchObject({ room: room.roomName, identity: 'device:abc' });
    const revoke = Number(req.body.revokeTokenTs);
    expect(revoke).toBeGreaterThanOrEqual(before);
    expect(revoke).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    const { payload } = await jwtVerify(req.auth.replace(/^Bearer /, ''), new TextEncoder().encode(secret));
    expect(payload).toMatchObject({ iss: 'APIkey123', video: { room: room.roomName, roomAdmin: true } });
  });

  it('takes a participant (or room) the server no longer knows as removed already', async () => {
    const vcs = new LiveKitVcs({ url, apiKey: 'APIkey123', apiSecret: secret });
    answer = { status: 404, body: { code: 'not_found', msg: 'participant not found' } };
    await expect(vcs.removeParticipant('acme', room, 'u1')).resolves.toBeUndefined();
    answer = { status: 403, body: { code: 'permission_denied', msg: 'no permissions to access the room' } };
    await expect(vcs.removeParticipant('acme', room, 'u1')).rejects.toMatchObject({ status: 403 });
    answer = { status: 200, body: {} };
  });
});
