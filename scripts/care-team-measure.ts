/**
 * Decision 1132's measurement: the time of `DirectoryScope.visibleTo` for patients of a tenant with
 * EVENTS events, queried each time (the rule before the cache) and with the care-team cache (first ask
 * and cached asks), on the MongoDB-protocol server and Redis of MONGODB_URI and REDIS_URL. Writes a
 * database and keys of its own and removes them. Not a test: figures for the decision.
 *
 *   MONGODB_URI=mongodb://127.0.0.1:27028/ REDIS_URL=redis://user:pass@127.0.0.1:6390 npx tsx scripts/care-team-measure.ts
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Types } from 'mongoose';
import { Mongo } from '../src/data/mongo.js';
import { createRedis } from '../src/data/redis.js';
import { redisKeys } from '../src/data/redis-keys.js';
import { EventRepository } from '../src/data/repositories/event.repository.js';
import { GroupRepository } from '../src/data/repositories/group.repository.js';
import { CareTeamStore } from '../src/data/stores/care-team.store.js';
import { DirectoryScope } from '../src/core/directory/directory-scope.js';

const EVENTS = Number(process.env.EVENTS ?? 20_000);
const PATIENTS = Number(process.env.PATIENTS ?? 2_000);
const CLINICIANS = 200;
const ASKED = Number(process.env.ASKED ?? 500);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 8);

const id = randomBytes(4).toString('hex');
const tenant = `ctm${id}`;

async function seed(mongo: Mongo, patients: Types.ObjectId[], clinicians: Types.ObjectId[]) {
  const Event = mongo.tenantDb(tenant).models.Event;
  const at = Date.now();
  for (let done = 0; done < EVENTS; done += 1000) {
    const batch = Array.from({ length: Math.min(1000, EVENTS - done) }, (_, i) => {
      const n = done + i;
      // Each patient's events are with different clinicians: a care team of about EVENTS / PATIENTS.
      const organizerId = clinicians[(n + 13 * Math.floor(n / PATIENTS)) % CLINICIANS]!;
      const patient = patients[n % patients.length]!;
      return {
        name: `Consult ${n}`,
        nameLower: `consult ${n}`,
        startAt: new Date(at - n * 60_000),
        endAt: new Date(at - n * 60_000 + 1_800_000),
        organizerId,
        participants: [
          { userId: organizerId, role: 'host' },
          { userId: patient, role: 'participant' },
        ],
        participantIds: [organizerId, patient],
        status: n % 11 === 0 ? 'cancelled' : 'completed',
        meetingCode: `${id}${n}`,
      };
    });
    await Event.insertMany(batch, { lean: true });
  }
}

/** Asks `visibleTo` for each patient, IN_FLIGHT at a time; per-ask times in ms. */
async function round(scope: DirectoryScope, patients: Types.ObjectId[]): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < patients.length) {
      const userId = String(patients[next++]);
      const t0 = performance.now();
      await scope.visibleTo({ tenant, userId, role: 'patient' });
      times.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const wall = performance.now() - t0;
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(2);
  console.log(
    `  ${patients.length} asks, ${IN_FLIGHT} in flight: wall ${(wall / 1000).toFixed(2)} s, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms`,
  );
  return times;
}

async function main() {
  const mongo = await Mongo.connect({
    uri: process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27028/',
    catalogDb: `ctm_catalog_${id}`,
    tenantDbPrefix: 'ctm_',
    timeoutMs: 10_000,
  });
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6390', 'care-team-measure');
  const keys = redisKeys(`ctm:${id}:`);
  const patients = Array.from({ length: PATIENTS }, () => new Types.ObjectId());
  const clinicians = Array.from({ length: CLINICIANS }, () => new Types.ObjectId());
  try {
    const t0 = performance.now();
    await seed(mongo, patients, clinicians);
    console.log(`seeded ${EVENTS} events (${PATIENTS} patients) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const base = {
      patientScope: async () => 'careTeam' as const,
      events: (t: string) => new EventRepository(mongo.tenantDb(t)),
      groups: (t: string) => new GroupRepository(mongo.tenantDb(t)),
    };
    const asked = patients.slice(0, ASKED);
    console.log('queried at every ask (the rule before decision 1132):');
    await round(new DirectoryScope(base), asked);
    const store = new CareTeamStore({ redis, keys, ttlSeconds: 600 });
    mongo.onCareTeamWrites(store);
    const cached = new DirectoryScope({ ...base, careTeams: store });
    console.log('with the care-team cache, first ask of each patient (query, then kept):');
    await round(cached, asked);
    console.log('with the care-team cache, second ask (served from Redis):');
    await round(cached, asked);
    console.log('again after one care-team write of the tenant (every entry retired):');
    await mongo.tenantDb(tenant).careTeamWrite(async () => undefined);
    await round(cached, asked);
    const team = await cached.visibleTo({ tenant, userId: String(patients[1]), role: 'patient' });
    const bytes = await redis.call('MEMORY', 'USAGE', keys.careTeam(tenant, String(patients[1])));
    console.log(`one entry: care team of ${team!.length}, MEMORY USAGE ${String(bytes)} bytes`);
  } finally {
    await mongo.tenantDb(tenant).conn.dropDatabase();
    const left = await redis.keys(`ctm:${id}:*`);
    if (left.length) await redis.del(...left);
    await redis.quit();
    await mongo.close();
  }
}

await main();
