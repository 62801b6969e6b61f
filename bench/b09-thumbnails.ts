/**
 * B9: thumbnails per second through BullMQ: `images` distinct JPEGs stored as tenant media, each queued
 * as an upload queues it (services.media.queueThumbnail: a burst shares jobs of up to 16 images,
 * decision 1187), timed until every job finished (the workers role: fetch from the store, sharp, store
 * the WebP, mark the media records). The baseline is sharp
 * alone making the same thumbnails from memory with the same concurrency. Each side first makes
 * `warmup` thumbnails unmeasured (the worker loads sharp with its first job; sharp alone at import).
 * Beside the rates, the CPU each process spent per thumbnail while the jobs ran (/proc: the node with its
 * libvips threads, the database server, Redis), which tells the product's own cost from sharp's.
 */
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
} from './harness/sides.js';
import { scaled } from './harness/scale.js';
import { images } from './harness/inputs.js';
import type { HostProcess } from './harness/hosts.js';
import { cpuDuring, untilQuiet } from './harness/proc-cpu.js';
import { listenerPid } from '../scripts/ports.mjs';

const settings = { images: scaled(300, 8), warmup: scaled(16, 4), width: 1600, height: 1200, concurrency: 4 };

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const env = productEnv(ctx, 'b09', { ROLES: 'workers', JOBS_CONCURRENCY: String(settings.concurrency) });
  let node: HostProcess | undefined;
  let alone: HostProcess | undefined;
  let files: string[] = [];
  const pids: { db?: number; redis?: number } = {};
  const findServers = () => {
    pids.db = listenerPid(Number(new URL(ctx.mongoUri).port));
    pids.redis = listenerPid(Number(new URL(ctx.redisUrl).port));
  };
  const thumbnails = async (tenant: string, images: string[]) => {
    await node!.call('tenant', { name: tenant });
    const hashes = await node!.call<string[]>('putImages', { tenant, files: images });
    // The window starts with the database server quiet (decision 1179): not in the tail of the tenant's
    // provisioning just before it, which fell on the first rounds' jobs (0.9-1.2 ms of the server's CPU a
    // thumbnail in rounds 1-2 against 0.2-0.3 in round 3). Sharp alone's rounds wait the same way.
    const settled = await untilQuiet(pids.db);
    const { result: r, cpu } = await cpuDuring(
      { node: node!.pid, node_main: { main: node!.pid }, db: pids.db, redis: pids.redis },
      () =>
        node!.call<{ elapsedMs: number; completed: number; jobs: number; failed: number; firstFailure?: string }>(
          'thumbnails',
          {
            tenant,
            hashes,
            timeoutMs: 300_000,
          },
        ),
    );
    if (r.failed) throw new Error(`${r.failed} thumbnails failed: ${r.firstFailure}`);
    return {
      thumbnails_per_s: r.completed / (r.elapsedMs / 1000),
      seconds: r.elapsedMs / 1000,
      jobs: r.jobs,
      db_quiet_wait_ms: settled.waitedMs,
      ...cpuPerThumbnail(cpu, r.completed),
    };
  };
  // A fresh tenant per round: job ids derive from tenant and content, and finished work is skipped.
  const productRound = (i: number): Promise<Figures> => thumbnails(`bench${i}`, files);
  return {
    product: {
      label: 'product',
      async start() {
        files = await images(ctx.cacheDir, settings.images, settings.width, settings.height);
        node = await startProduct(ctx, 'b09', 'node', env);
        findServers();
        // Warm-up (as sharp alone's below): the worker loads sharp with its first thumbnail.
        await thumbnails('benchwarm', files.slice(0, settings.warmup));
      },
      round: productRound,
      stop: () => stopProduct(ctx, [node], env),
    },
    baseline: {
      label: 'sharp alone',
      async start() {
        files = await images(ctx.cacheDir, settings.images, settings.width, settings.height);
        alone = await startBaseline(ctx, 'b09', 'sharp-thumbnails.ts');
        findServers();
        await alone.call('run', { files: files.slice(0, settings.warmup), concurrency: settings.concurrency });
      },
      round: async () => {
        const settled = await untilQuiet(pids.db);
        const { result: r, cpu } = await cpuDuring({ node: alone!.pid, node_main: { main: alone!.pid } }, () =>
          alone!.call<{ elapsedMs: number; done: number }>('run', { files, concurrency: settings.concurrency }),
        );
        return {
          thumbnails_per_s: r.done / (r.elapsedMs / 1000),
          seconds: r.elapsedMs / 1000,
          db_quiet_wait_ms: settled.waitedMs,
          ...cpuPerThumbnail(cpu, r.done),
        };
      },
      stop: async () => alone?.stop(),
    },
  };
}

/** CPU milliseconds per thumbnail of each process measured (`<name>_cpu_ms_per_thumbnail`); -1 where /proc could not tell. */
function cpuPerThumbnail(cpu: Record<string, number>, thumbnails: number): Figures {
  const out: Figures = {};
  for (const [name, seconds] of Object.entries(cpu))
    out[`${name}_cpu_ms_per_thumbnail`] = seconds < 0 ? -1 : (seconds * 1000) / Math.max(1, thumbnails);
  return out;
}

export const benchmark: Benchmark = {
  id: 'b09',
  title: 'Thumbnails/s through BullMQ',
  target: '>= 90% of baseline',
  baselineName: 'sharp alone on the same images',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'thumbnails_per_s',
  unavailable: () => firstReason(missingRoles('workers'), missingModules('src/workers/jobs/thumbnail.job.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (_p, _b, ratio) => [check('thumbnails/s ratio', ratio, 'min', 0.9)],
};
