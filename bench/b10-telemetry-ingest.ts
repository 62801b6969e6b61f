/**
 * B10: gRPC telemetry ingest, events/s: SendTelemetryBatch calls with the tenant's telemetry key
 * (credential check, validation, event and conference checks, idempotent storage by conference and
 * sequence) against a bare grpc-js server with the same proto that only acknowledges.
 */
import path from 'node:path';
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv } from './harness/env.js';
import {
  startProduct,
  startBaseline,
  stopProduct,
  missingModules,
  missingRoles,
  firstReason,
  logFile,
} from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { projectRoot } from './harness/paths.js';
import type { HostProcess } from './harness/hosts.js';

const TENANT = 'bench';
const PROTO = { protoRoot: path.join(projectRoot, 'proto'), proto: 'consult/telemetry/v1/telemetry.proto' };
const settings = { batch: 50, concurrency: 4, durationMs: scaled(6000, 1500), warmupMs: scaled(1000, 300) };

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const env = productEnv(ctx, 'b10', { ROLES: 'telemetry' });
  let node: HostProcess | undefined;
  let bare: HostProcess | undefined;
  let key = '';
  let eventId = '';
  const round = async (
    label: string,
    i: number,
    address: string,
    metadata: Record<string, string>,
  ): Promise<Figures> => {
    const r = await runLoad(
      'grpc-ingest',
      {
        ...PROTO,
        address,
        metadata,
        eventId,
        ...settings,
        deadlineMs: settings.durationMs + settings.warmupMs + 60_000,
      },
      logFile(ctx, `b10-load-${label}-${i}`),
    );
    if (r.errors) ctx.log(`  ${label}: ${r.errors} failed calls, first: ${r.firstError}`);
    return {
      events_per_s: r.events_per_s,
      batch_p50_ms: r.batch_p50_ms,
      batch_p99_ms: r.batch_p99_ms,
      failed_calls: r.errors,
    };
  };
  return {
    product: {
      label: 'product',
      async start() {
        node = await startProduct(ctx, 'b10', 'node', env);
        await node.call('tenant', { name: TENANT });
        key = await node.call<string>('telemetryKey', { tenant: TENANT });
        const [organizer] = await node.call<{ id: string }[]>('users', {
          tenant: TENANT,
          prefix: 'host',
          count: 1,
          role: 'clinician',
        });
        [eventId] = await node.call<string[]>('events', { tenant: TENANT, organizerIds: [organizer!.id] });
      },
      async round(i) {
        const figures = await round('product', i, `127.0.0.1:${node!.info.grpcPort}`, {
          'x-tenant': TENANT,
          authorization: `Bearer ${key}`,
        });
        // The database's own rate for the same records, batch and concurrency: what storing every event can reach here.
        const ceiling = await node!.call<{ docs_per_s: number }>('insertCeiling', {
          tenant: TENANT,
          model: 'TelemetryRecord',
          batch: settings.batch,
          concurrency: settings.concurrency,
          durationMs: settings.durationMs,
        });
        return {
          ...figures,
          db_insert_events_per_s: ceiling.docs_per_s,
          share_of_db_insert: figures.events_per_s! / ceiling.docs_per_s,
        };
      },
      stop: () => stopProduct(ctx, [node], env),
    },
    baseline: {
      label: 'bare grpc-js',
      async start() {
        bare = await startBaseline(ctx, 'b10', 'grpc-bare.server.ts', PROTO);
      },
      round: (i) => round('baseline', i, bare!.info.address, {}),
      stop: async () => bare?.stop(),
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b10',
  title: 'gRPC telemetry ingest: events/s',
  target: ">= 50% of baseline; >= 80% of the database's own insert rate",
  baselineName: 'bare grpc-js server, same proto',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'events_per_s',
  unavailable: () =>
    firstReason(
      missingRoles('telemetry'),
      missingModules('proto/consult/telemetry/v1/telemetry.proto', 'test/support/auth.ts'),
    ),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('events/s ratio', ratio, 'min', 0.5),
    check("share of the database's insert rate", p.share_of_db_insert, 'min', 0.8),
    check('failed calls', p.failed_calls, 'max', 0),
  ],
};
