/**
 * gRPC telemetry load: `concurrency` unary SendTelemetryBatch calls in flight, each carrying `batch`
 * new events (participant joins/leaves and chat activity of this generator's conferences, unique
 * sequences), closed loop for `durationMs` after a warm-up, with the tenant credential in metadata.
 * With `serverPid` and `dbPid`, the CPU those processes and this one used in the measured window, per
 * stored event.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { params, finish, deadline, now } from './common.js';
import { latencyFigures } from '../harness/stats.js';
import { cpuSeconds } from '../harness/proc-cpu.js';

const P = z.object({
  address: z.string(),
  protoRoot: z.string(),
  proto: z.string(),
  metadata: z.record(z.string(), z.string()).default({}),
  eventId: z.string(),
  batch: z.number().int().positive(),
  concurrency: z.number().int().positive(),
  warmupMs: z.number().int().nonnegative().default(1000),
  durationMs: z.number().int().positive(),
  deadlineMs: z.number().int().positive(),
  /** The ingesting process and the database server: their CPU per event in the measured window. */
  serverPid: z.number().int().positive().optional(),
  dbPid: z.number().int().positive().optional(),
});
const p = params(P);
deadline(p.deadlineMs);

type Client = grpc.Client & {
  SendTelemetryBatch(
    req: unknown,
    md: grpc.Metadata,
    cb: (e: grpc.ServiceError | null, r: { ack: { stored: number; duplicates: number } }) => void,
  ): void;
};
const def = protoLoader.loadSync(p.proto, {
  includeDirs: [p.protoRoot],
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const pkg = grpc.loadPackageDefinition(def) as unknown as {
  consult: { telemetry: { v1: { TelemetryService: new (addr: string, creds: grpc.ChannelCredentials) => Client } } };
};
const client = new pkg.consult.telemetry.v1.TelemetryService(p.address, grpc.credentials.createInsecure());
const md = new grpc.Metadata();
for (const [k, v] of Object.entries(p.metadata)) md.set(k, v);

const run = randomBytes(4).toString('hex');
let seq = 0;
let ok = 0;
let stored = 0;
let errors = 0;
let firstError: string | undefined;
let measuring = false;
const lat: number[] = [];

function events(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const s = ++seq;
    const payload =
      i % 3 === 0
        ? { participantJoined: { participantKey: `guest:${s}`, userId: '', displayName: `Guest ${s}` } }
        : i % 3 === 1
          ? { participantLeft: { participantKey: `guest:${s - 1}` } }
          : { chatActivity: { messageCount: 2 } };
    return {
      conferenceId: `bench-${run}`,
      eventId: p.eventId,
      sequence: String(s),
      occurredAt: { seconds: String(Math.floor(Date.now() / 1000)), nanos: 0 },
      ...payload,
    };
  });
}

function call(): Promise<void> {
  const t0 = now();
  return new Promise((resolve) => {
    client.SendTelemetryBatch({ events: events(p.batch) }, md, (e, r) => {
      if (measuring) {
        if (e) {
          errors++;
          firstError ??= `${e.code} ${e.details}`;
        } else {
          ok++;
          stored += r.ack.stored;
          lat.push(now() - t0);
        }
      }
      resolve();
    });
  });
}

async function loop(until: number): Promise<void> {
  await Promise.all(
    Array.from({ length: p.concurrency }, async () => {
      while (now() < until) await call();
    }),
  );
}

async function main(): Promise<void> {
  await loop(now() + p.warmupMs);
  measuring = true;
  const cpu = () => ({
    server: p.serverPid ? cpuSeconds(p.serverPid) : undefined,
    db: p.dbPid ? cpuSeconds(p.dbPid) : undefined,
    self: process.cpuUsage(),
  });
  const cpu0 = cpu();
  const t0 = now();
  await loop(t0 + p.durationMs);
  const elapsed = now() - t0;
  const cpu1 = cpu();
  measuring = false;
  const perEvent = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || !stored ? undefined : ((b - a) * 1e6) / stored;
  const self = process.cpuUsage(cpu0.self);
  client.close();
  finish({
    calls: ok,
    stored,
    errors,
    firstError,
    elapsedMs: elapsed,
    events_per_s: (stored / elapsed) * 1000,
    server_cpu_us_per_event: perEvent(cpu0.server, cpu1.server),
    db_cpu_us_per_event: perEvent(cpu0.db, cpu1.db),
    client_cpu_us_per_event: stored ? (self.user + self.system) / stored : undefined,
    ...latencyFigures(lat, 'batch_'),
  });
}

main().catch((e) => finish({ error: String(e?.message ?? e) }));
