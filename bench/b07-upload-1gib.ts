/**
 * B7: upload of a 1 GiB file through POST /api/media/upload (multipart streamed through busboy,
 * extension and magic-byte checks, SHA-256 while writing, content-addressed store, MediaFile record)
 * against a raw copy of the same bytes into the same object store driver. Throughput in MiB/s and
 * the server's peak RSS growth during the upload (sampled every 20 ms in the server process) over its
 * resting RSS before its first upload: a process keeps much of what an upload made it grow (freed
 * Buffers stay with the allocator), so a later round's growth over its own start would hide it.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv, tenantHost } from './harness/env.js';
import { startProduct, startBaseline, stopProduct, missingModules, logFile } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import type { HostProcess } from './harness/hosts.js';

const TENANT = 'bench';
const MiB = 2 ** 20;
const settings = { bytes: scaled(1024 * MiB, 64 * MiB), storage: 'fs (local disk)' };

/** Each server's RSS after a full GC before its first upload. */
const resting = new Map<HostProcess, number>();

async function upload(
  ctx: BenchContext,
  server: HostProcess,
  label: string,
  i: number,
  req: { url: string; path: string; headers: Record<string, string>; multipart: boolean },
): Promise<Figures> {
  const before = await server.peakReset();
  if (!resting.has(server)) resting.set(server, before);
  const r = await runLoad(
    'upload',
    { ...req, bytes: settings.bytes, seed: i + 1 + (req.multipart ? 0 : 1000), deadlineMs: 600_000 },
    logFile(ctx, `b07-load-${label}-${i}`),
  );
  const { peakRss } = await server.peak();
  return {
    mib_per_s: r.mib_per_s,
    seconds: r.elapsedMs / 1000,
    rss_growth_mib: (peakRss - resting.get(server)!) / MiB,
    // Context: the growth over this round's own start (after the earlier rounds' uploads).
    rss_round_growth_mib: (peakRss - before) / MiB,
  };
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const env = productEnv(ctx, 'b07', { ROLES: 'http' });
  let node: HostProcess | undefined;
  let raw: HostProcess | undefined;
  let token = '';
  return {
    product: {
      label: 'product',
      async start() {
        node = await startProduct(ctx, 'b07', 'node', env);
        await node.call('tenant', { name: TENANT });
        await node.call('uploadLimits', { tenant: TENANT, maxBytes: 2 * settings.bytes });
        token = (
          await node.call<{ token: string }[]>('users', {
            tenant: TENANT,
            prefix: 'uploader',
            count: 1,
            role: 'clinician',
          })
        )[0]!.token;
      },
      round: (i) =>
        upload(ctx, node!, 'product', i, {
          url: node!.info.url,
          path: '/api/media/upload',
          multipart: true,
          headers: { host: tenantHost(node!.info.url, TENANT), authorization: `Bearer ${token}` },
        }),
      stop: () => stopProduct(ctx, [node], env),
    },
    baseline: {
      label: 'raw copy into the object store',
      async start() {
        raw = await startBaseline(ctx, 'b07', 'raw-store.server.ts', { env });
      },
      round: (i) =>
        upload(ctx, raw!, 'baseline', i, { url: raw!.info.url, path: '/raw', multipart: false, headers: {} }),
      stop: async () => raw?.stop(),
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b07',
  title: 'Upload of a 1 GiB file: throughput and peak RSS growth',
  target: '>= 70% of baseline throughput; RSS growth <= 64 MiB',
  baselineName: 'raw copy into the same object store',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'mib_per_s',
  unavailable: () => missingModules('src/http/routes/media/media.router.ts', 'test/support/auth.ts'),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('throughput ratio', ratio, 'min', 0.7),
    check('RSS growth MiB', p.rss_growth_mib, 'max', 64),
  ],
};
