import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedis, type RedisClient } from '../../../src/data/redis.js';
import { subscribePushes } from '../../../src/realtime/redis-publisher.js';
import { Revocations } from '../../../src/auth/revocations.js';
import { redisKeys } from '../../../src/data/redis-keys.js';
import { RevocationsStore } from '../../../src/data/stores/revocations.store.js';
import { uniqueId } from '../../support/env.js';

/**
 * Redis subscriber callbacks run inside ioredis's message event: a handler that throws there would
 * escape to the process (an uncaught exception ends it). The subscriptions hand such failures to their
 * error callback and keep delivering.
 */
describe('Redis subscriber callbacks that throw', () => {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390';
  const id = uniqueId();
  let pub: RedisClient;
  let sub: RedisClient;
  beforeAll(() => {
    pub = createRedis(url, 'guard-pub');
    sub = createRedis(url, 'guard-sub');
  });
  afterAll(async () => {
    await Promise.allSettled([pub.quit(), sub.quit()]);
  });

  it('relayed hub pushes: an unknown name is dropped, a throwing delivery is reported and the next push is delivered', async () => {
    const channel = `test:${id}:pushes`;
    const delivered: string[] = [];
    const errors: unknown[] = [];
    let second!: () => void;
    const gotSecond = new Promise<void>((r) => (second = r));
    const stop = await subscribePushes(
      sub,
      channel,
      (p) => {
        if (p.event === 'sayHi') throw new Error('delivery failed');
        delivered.push(p.event);
        second();
      },
      (err) => errors.push(err),
    );
    await pub.publish(channel, JSON.stringify({ rooms: ['r'], event: 'boom', payload: {} }));
    await pub.publish(channel, JSON.stringify({ rooms: ['r'], event: 'sayHi', payload: {} }));
    await pub.publish(channel, JSON.stringify({ rooms: ['r'], event: 'userStatus', payload: {} }));
    await gotSecond;
    await stop();
    expect(delivered).toEqual(['userStatus']);
    expect(errors).toEqual([expect.objectContaining({ message: 'delivery failed' })]);
  });

  it('session revocations: a throwing handler is reported and the next revocation is handled', async () => {
    const channel = `test:${id}:revocations`;
    const handled: string[] = [];
    const errors: unknown[] = [];
    let second!: () => void;
    const gotSecond = new Promise<void>((r) => (second = r));
    const keys = { ...redisKeys(`test:${id}:`), revocationChannel: channel };
    const revocations = new Revocations({
      store: new RevocationsStore({ redis: pub, keys }),
      markerTtlSeconds: 60,
      idpMarkerTtlSeconds: 60,
    });
    const stop = await revocations.subscribe(
      (m) => {
        if (m.sessionId === 'boom') throw new Error('disconnect failed');
        handled.push(m.sessionId ?? '');
        second();
      },
      (err) => errors.push(err),
    );
    await pub.publish(channel, JSON.stringify({ tenant: 'acme', sessionId: 'boom', userId: 'u1' }));
    await pub.publish(channel, JSON.stringify({ tenant: 'acme', sessionId: 's2', userId: 'u1' }));
    await gotSecond;
    await stop();
    expect(handled).toEqual(['s2']);
    expect(errors).toEqual([expect.objectContaining({ message: 'disconnect failed' })]);
  });
});
