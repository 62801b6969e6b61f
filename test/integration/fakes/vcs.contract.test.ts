import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedis, type RedisClient } from '../../../src/data/redis.js';
import { redisKeys } from '../../../src/data/redis-keys.js';
import { EmbeddedVcs } from '../../../src/vcs/embedded.adapter.js';
import { uniqueId } from '../../support/env.js';
import { FakeVcs } from '../../support/fakes/index.js';
import { SignJWT, jwtVerify } from 'jose';

/**
 * The video conferencing port's contract as the meeting tests rely on it: the in-memory FakeVcs and the
 * embedded adapter on the test Redis answer the same cases (rooms, join tokens, closing, removal,
 * recordings).
 */
type Vcs = Pick<FakeVcs, keyof EmbeddedVcs & keyof FakeVcs>;

const SIDES: [string, () => { vcs: Vcs; close(): Promise<void> }][] = [
  ['the in-memory fake', () => ({ vcs: new FakeVcs('http://consult.test'), close: async () => undefined })],
  [
    'the embedded adapter on the test Redis',
    () => {
      const redis: RedisClient = createRedis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390', 'fakes-vcs');
      const prefix = `fv-${uniqueId()}:`;
      const keys = redisKeys(prefix);
      const vcs = new EmbeddedVcs({
        redis,
        recordingKey: keys.vcsRecording,
        closedRoomKey: keys.vcsClosedRoom,
        removedKey: keys.vcsRemoved,
        secret: 'contract-secret-contract-secret-32',
        publicUrl: 'http://consult.test',
      });
      return {
        vcs,
        close: async () => {
          const left = await redis.keys(`${prefix}*`);
          if (left.length) await redis.del(...left);
          await redis.quit();
        },
      };
    },
  ],
];

describe.each(SIDES)('video conferencing on %s', (_name, make) => {
  let side: ReturnType<(typeof SIDES)[number][1]>;
  const T = `vcs-${uniqueId()}`;
  beforeAll(() => {
    side = make();
  });
  afterAll(async () => side.close());

  it('names one room per event, whoever asks', async () => {
    const a = await side.vcs.createRoom(T, 'e1');
    expect(await side.vcs.createRoom(T, 'e1')).toEqual(a);
    expect(a).toEqual({
      provider: 'embedded',
      roomName: `consult-${T}-e1`,
      url: `http://consult.test/vcs/rooms/consult-${T}-e1`,
    });
    expect((await side.vcs.createRoom(T, 'e2')).roomName).not.toBe(a.roomName);
  });

  it('a join token admits its holder until the room closes; closing twice is fine', async () => {
    const room = await side.vcs.createRoom(T, 'e3');
    const d = await side.vcs.joinDetails(T, room, { identity: 'u1', name: 'Una', role: 'host' });
    expect(d).toMatchObject(room);
    expect(await side.vcs.verifyJoinToken(d.token, room.roomName)).toEqual({
      identity: 'u1',
      tenant: T,
      role: 'host',
      name: 'Una',
    });
    await expect(side.vcs.verifyJoinToken(d.token, `${room.roomName}-other`)).rejects.toMatchObject({
      code: 'token_invalid',
    });
    await side.vcs.closeRoom(T, room);
    await side.vcs.closeRoom(T, room);
    await expect(side.vcs.verifyJoinToken(d.token, room.roomName)).rejects.toMatchObject({ code: 'token_invalid' });
  });

  it('removing an identity refuses its earlier tokens, not a later one, nor anyone else’s', async () => {
    const room = await side.vcs.createRoom(T, 'e4');
    const before = await side.vcs.joinDetails(T, room, { identity: 'device:h1', name: 'Headset', role: 'device' });
    const other = await side.vcs.joinDetails(T, room, { identity: 'u2', name: 'Ugo', role: 'participant' });
    await side.vcs.removeParticipant(T, room, 'device:h1');
    await expect(side.vcs.verifyJoinToken(before.token, room.roomName)).rejects.toMatchObject({
      code: 'token_invalid',
    });
    expect((await side.vcs.verifyJoinToken(other.token, room.roomName)).identity).toBe('u2');
    const after = await side.vcs.joinDetails(T, room, { identity: 'device:h1', name: 'Headset', role: 'device' });
    expect((await side.vcs.verifyJoinToken(after.token, room.roomName)).identity).toBe('device:h1');
  });

  it('a recording stops once and opens as a file only after it stopped, in its own room only', async () => {
    const room = await side.vcs.createRoom(T, 'e5');
    const rec = await side.vcs.startRecording(T, room);
    expect(await side.vcs.openRecording(T, room, rec.recordingId)).toBeNull();
    const stopped = await side.vcs.stopRecording(T, room, rec.recordingId);
    expect(await side.vcs.stopRecording(T, room, rec.recordingId)).toEqual(stopped);
    const file = await side.vcs.openRecording(T, room, rec.recordingId);
    expect(file).toMatchObject({ contentType: 'audio/wav', fileName: `${room.roomName}-${rec.recordingId}.wav` });
    file!.body.destroy();
    const elsewhere = await side.vcs.createRoom(T, 'e6');
    await expect(side.vcs.stopRecording(T, elsewhere, rec.recordingId)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the embedded adapter’s join token', () => {
  const secret = 'token-secret-token-secret-token-32';
  const prefix = `fvt-${uniqueId()}:`;
  const keys = redisKeys(prefix);
  let redis: RedisClient;
  let vcs: EmbeddedVcs;
  const T = `vcst-${uniqueId()}`;
  beforeAll(() => {
    redis = createRedis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390', 'fakes-vcs-token');
    vcs = new EmbeddedVcs({
      redis,
      recordingKey: keys.vcsRecording,
      closedRoomKey: keys.vcsClosedRoom,
      removedKey: keys.vcsRemoved,
      secret,
      publicUrl: 'http://consult.test',
      tokenTtlSeconds: 600,
    });
  });
  afterAll(async () => {
    const left = await redis.keys(`${prefix}*`);
    if (left.length) await redis.del(...left);
    await redis.quit();
  });

  it('is an HS256 JWT any JWT library verifies, with its room as audience and the stated expiry', async () => {
    const room = await vcs.createRoom(T, 'e1');
    const before = Math.floor(Date.now() / 1000);
    const d = await vcs.joinDetails(T, room, { identity: 'u1', name: 'Una', role: 'host' });
    const { payload, protectedHeader } = await jwtVerify(d.token, new TextEncoder().encode(secret), {
      issuer: 'consult-embedded-vcs',
      audience: room.roomName,
      algorithms: ['HS256'],
    });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ sub: 'u1', tenant: T, room: room.roomName, name: 'Una', role: 'host', gen: 0 });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.exp).toBe(payload.iat! + 600);
    expect(d.expiresAt).toBe(new Date(payload.exp! * 1000).toISOString());
  });

  it('refuses a token signed with another key, one altered, and one expired', async () => {
    const room = await vcs.createRoom(T, 'e2');
    const claims = { tenant: T, room: room.roomName, name: 'Una', role: 'host', gen: 0 };
    const forge = (key: string, exp: number) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('consult-embedded-vcs')
        .setAudience(room.roomName)
        .setSubject('u1')
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(key));
    const now = Math.floor(Date.now() / 1000);
    // The same claims under the right key pass: the refusals below are the key, the body and the expiry.
    expect((await vcs.verifyJoinToken(await forge(secret, now + 60), room.roomName)).identity).toBe('u1');
    await expect(vcs.verifyJoinToken(await forge(`${secret}-other`, now + 60), room.roomName)).rejects.toMatchObject({
      code: 'token_invalid',
    });
    const [h, , s] = (await vcs.joinDetails(T, room, { identity: 'u1', name: 'Una', role: 'host' })).token.split('.');
    const body = Buffer.from(JSON.stringify({ ...claims, role: 'participant', sub: 'u9' })).toString('base64url');
    await expect(vcs.verifyJoinToken(`${h}.${body}.${s}`, room.roomName)).rejects.toMatchObject({
      code: 'token_invalid',
    });
    await expect(vcs.verifyJoinToken(await forge(secret, now - 60), room.roomName)).rejects.toMatchObject({
      code: 'token_invalid',
    });
  });
});
