import { describe, expect, it } from '@jest/globals';
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
