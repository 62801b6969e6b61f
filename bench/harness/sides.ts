import path from 'node:path';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import { spawnHost, type HostProcess, type HostOptions } from './hosts.js';
import { benchRoot } from './paths.js';
import { productNodeFlags, productRuntime } from './compiled.js';
import type { BenchContext, Figures, Side } from './types.js';
import type { ProductEnv } from './env.js';

export function logFile(ctx: BenchContext, name: string): string {
  return path.join(ctx.workDir, 'logs', `${name}.log`);
}

/** Where CPU profiles of this benchmark's product and baseline processes go when `--profile <id>` selected it. */
export function profileDir(bench: string): string | undefined {
  return process.env.BENCH_PROFILE === bench ? path.join(benchRoot, 'results', 'profiles') : undefined;
}

/**
 * Starts a real product node (child process) with `env` (ROLES included), compiled unless
 * `BENCH_RUNTIME=tsx` (compiled.ts).
 */
export function startProduct(
  ctx: BenchContext,
  bench: string,
  name: string,
  env: Record<string, string>,
  opts: Partial<HostOptions> = {},
): Promise<HostProcess> {
  return spawnHost(
    'harness/product-node.ts',
    { env },
    {
      logFile: logFile(ctx, `${bench}-${name}`),
      cpuProfDir: profileDir(bench),
      runtime: productRuntime(),
      nodeFlags: productNodeFlags(),
      ...opts,
    },
  );
}

/** Starts a baseline server module (bench/baselines/<file>) in its own process, through tsx as always. */
export function startBaseline(
  ctx: BenchContext,
  bench: string,
  file: string,
  params: unknown = {},
  opts: Partial<HostOptions> = {},
): Promise<HostProcess> {
  return spawnHost(`baselines/${file}`, params, {
    logFile: logFile(ctx, `${bench}-baseline`),
    cpuProfDir: profileDir(bench),
    runtime: 'tsx',
    // The product nodes' V8 flags (decision 1184): a heap sized otherwise (Node.js 24 grows the young
    // generation to 32 MiB where the product's stops at 16) would be measured as the code's memory.
    nodeFlags: productNodeFlags(),
    ...opts,
  });
}

/** Deletes every Redis key under a benchmark's prefix. */
export async function cleanupRedis(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Stops product nodes, then drops their databases (catalog and tenants) and Redis keys, best effort:
 * a stop must not throw. The databases go only after every node has stopped, from a connection of
 * the harness: FerretDB on SQLite has crashed (SIGBUS) when a database was dropped under a live writer.
 */
export async function stopProduct(
  ctx: BenchContext,
  nodes: (HostProcess | undefined)[],
  env: ProductEnv,
): Promise<void> {
  await Promise.all(nodes.filter((n): n is HostProcess => !!n).map((n) => n.stop()));
  await dropDatabases(env.MONGODB_URI ?? ctx.mongoUri, env).catch((e: Error) =>
    ctx.log(`  database cleanup: ${e.message.split('\n')[0]}`),
  );
  await cleanupRedis(ctx.redisUrl, env.REDIS_PREFIX).catch((e: Error) => ctx.log(`  redis cleanup: ${e.message}`));
}

async function dropDatabases(mongoUri: string, env: ProductEnv): Promise<void> {
  const conn = await mongoose.createConnection(mongoUri, { serverSelectionTimeoutMS: 10_000 }).asPromise();
  try {
    // By name from the benchmark's catalog, not listDatabases: that command waits on the lock a stuck
    // FerretDB drop holds (scripts/services.mjs restarts such a server).
    const tenants = await conn
      .useDb(env.MONGODB_CATALOG_DB)
      .collection<{ name: string }>('tenants')
      .find({}, { projection: { name: 1 } })
      .toArray();
    for (const name of [...tenants.map((t) => `${env.MONGODB_TENANT_DB_PREFIX}${t.name}`), env.MONGODB_CATALOG_DB])
      await conn.useDb(name).dropDatabase();
  } finally {
    await conn.close();
  }
}

/** Existence of a source file of the project (how a benchmark tells its subject has landed). */
export async function missingModules(...files: string[]): Promise<string | null> {
  const { existsSync } = await import('node:fs');
  const missing = files.filter((f) => !existsSync(path.join(benchRoot, '..', f)));
  return missing.length ? `not in this tree yet: ${missing.join(', ')}` : null;
}

/** Roles not registered in src/composition/roles.ts yet (a node cannot start them), or null. */
export async function missingRoles(...roles: string[]): Promise<string | null> {
  const { ROLE_STARTERS } = await import('../../src/composition/roles.js');
  const missing = roles.filter((r) => !(ROLE_STARTERS as Record<string, unknown>)[r]);
  return missing.length ? `role(s) ${missing.join(', ')} not registered in src/composition/roles.ts yet` : null;
}

/** First non-null reason of several availability checks. */
export async function firstReason(...checks: Promise<string | null>[]): Promise<string | null> {
  for (const r of await Promise.all(checks)) if (r) return r;
  return null;
}

/** A side that sets up and tears down inside each round (a fresh cluster or server per round). */
export function roundsOnly(label: string, round: Side['round']): Side {
  return { label, start: async () => undefined, round, stop: async () => undefined };
}

/** Log file of a load generator started directly with spawnLoad. */
export const spawnLoadLog = logFile;

/**
 * The bare query of B6 and B11 (baselines/directory-queries.server.ts): the product's repository query
 * behind a bare Express route on the same server and data, loaded as the product is (`load`), then the
 * database's own rate for the same queries with no HTTP, reported as `rateFigure`.
 */
export function bareQuerySide(
  ctx: BenchContext,
  bench: string,
  o: {
    mongoUri: string;
    env: ProductEnv;
    tenant: string;
    /** The signed-in user the product side made (known once the product side started). */
    userId: () => string;
    paths: string[];
    conns: number;
    dbRateMs: number;
    rateFigure: string;
    load: (url: string, headers: Record<string, string>, round: number, label: string) => Promise<Figures>;
    /** One load before the measured rounds, not counted (the product side of the benchmark does the same). */
    warmUp?: boolean;
  },
): Side {
  let base: HostProcess | undefined;
  return {
    label: 'bare query',
    async start() {
      base = await startBaseline(ctx, bench, 'directory-queries.server.ts', {
        mongoUri: o.mongoUri,
        catalogDb: o.env.MONGODB_CATALOG_DB,
        tenantDbPrefix: o.env.MONGODB_TENANT_DB_PREFIX,
        tenant: o.tenant,
        userId: o.userId(),
      });
      if (o.warmUp) await o.load(base.info.url as string, {}, 0, 'baseline-warmup');
    },
    async round(i) {
      const http = await o.load(base!.info.url as string, {}, i, 'baseline');
      const db = await base!.call<{ per_s: number }>('rate', {
        paths: o.paths,
        concurrency: o.conns,
        durationMs: o.dbRateMs,
      });
      return { ...http, [o.rateFigure]: db.per_s };
    },
    stop: async () => base?.stop(),
  };
}
