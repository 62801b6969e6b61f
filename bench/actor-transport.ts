/**
 * The actor transport alone (decision 1156): one process, two RedisTransports on one Redis, requests of
 * a clinician's `getMeetingDetails`-sized message and reply, the caller's permissions named or as a mask
 * (rounds alternate; the first two warm up). Not a harness benchmark: no hub, no actor turn, no database.
 * Reports per round the requests/s, this process's CPU per request (both ends of the transport) and
 * Redis's, and the medians.
 *
 *   REDIS_URL=redis://... node --import tsx bench/actor-transport.ts [rounds] [requests] [concurrency]
 *   (defaults: 10 rounds a side, 20000 requests, 64 at a time)
 */
import { randomUUID } from 'node:crypto';
import { actorKeys } from '../src/actors/runtime/actor-keys.js';
import { RedisTransport } from '../src/actors/runtime/transport.js';
import { createRedis } from '../src/data/redis.js';
import { callerOfPrincipal } from '../src/kernel/caller.js';
import { BUILTIN_ROLES } from '../src/kernel/permissions.js';
import { createLogger } from '../src/observability/logger.js';

const url = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL;
if (!url) throw new Error('set REDIS_URL');
const [rounds = 10, requests = 20_000, concurrency = 64] = process.argv.slice(2).map(Number);

const redis = createRedis(url, 'bench-actor-transport');
const logger = createLogger({ level: 'silent' });
const keys = actorKeys(`bench:transport:${randomUUID()}:`);
/** About the 298 bytes of B1's reply. */
const reply = {
  eventId: '6745a1b2c3d4e5f601234567',
  title: 'Consultation 42',
  status: 'open',
  members: [{ userId: '6745a1b2c3d4e5f601234568', name: 'Clinician 42', role: 'host' }],
  seq: 17,
  locked: false,
  recording: false,
  waiting: 0,
  startsAt: '2026-12-01T10:00:00.000Z',
  endsAt: '2026-12-01T10:30:00.000Z',
};
const owner = new RedisTransport({ redis, keys, nodeId: 'owner', logger, onRequest: async () => reply });
const sender = new RedisTransport({ redis, keys, nodeId: 'sender', logger, onRequest: async () => undefined });
owner.start();
sender.start();
const caller = callerOfPrincipal({
  tenant: 'acme',
  userId: '6745a1b2c3d4e5f601234568',
  username: 'clinician0042',
  role: 'clinician',
  permissions: new Set(BUILTIN_ROLES.clinician!.permissions),
  scheme: 'internal',
  sessionId: randomUUID(),
  displayName: 'Clinician 42',
  kind: 'person',
});

/** The sender's record of its peers' catalogues; replaced by one that never learns for the named rounds. */
const internals = sender as unknown as { catalogues: Map<string, string> };
const learned = internals.catalogues;
const forgetful = Object.assign(new Map<string, string>(), { set: () => forgetful });

async function redisCpuSeconds(): Promise<number> {
  const info = await redis.info('cpu');
  const sys = /used_cpu_sys:([0-9.]+)/.exec(info)?.[1];
  const user = /used_cpu_user:([0-9.]+)/.exec(info)?.[1];
  return Number(sys) + Number(user);
}

async function round(mask: boolean, n: number) {
  internals.catalogues = mask ? learned : forgetful;
  const redis0 = await redisCpuSeconds();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started++ < n) {
        await sender.request(
          'owner',
          {
            to: { tenant: 'acme', kind: 'meeting', id: reply.eventId },
            msg: { type: 'details', caller },
            dedupeId: randomUUID(),
            attempt: 1,
            deadline: Date.now() + 5_000,
          },
          5_000,
        );
      }
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const redisCpu = (await redisCpuSeconds()) - redis0;
  return {
    perSecond: Math.round((n / ms) * 1000),
    cpuUs: +((cpu.user + cpu.system) / n).toFixed(1),
    redisUs: +((redisCpu * 1e6) / n).toFixed(1),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
await round(true, 5_000);
await round(false, 5_000);
const results: Record<'named' | 'mask', Awaited<ReturnType<typeof round>>[]> = { named: [], mask: [] };
for (let i = 0; i < rounds; i++) {
  for (const mask of [false, true]) {
    const r = await round(mask, requests);
    results[mask ? 'mask' : 'named'].push(r);
    console.log(`round ${i + 1} ${mask ? 'mask ' : 'named'}: ${JSON.stringify(r)}`);
  }
}
for (const side of ['named', 'mask'] as const) {
  const rs = results[side];
  console.log(
    `${side.padEnd(5)} median: requests/s ${median(rs.map((r) => r.perSecond))}, ` +
      `process CPU/request ${median(rs.map((r) => r.cpuUs))} us, Redis CPU/request ${median(rs.map((r) => r.redisUs))} us`,
  );
}
await sender.stop();
await owner.stop();
await redis.quit();
