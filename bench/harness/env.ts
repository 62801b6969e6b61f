import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BenchContext } from './types.js';

/** Environment of a product node for one benchmark: its own databases, Redis prefix and object store. */
export interface ProductEnv extends Record<string, string> {
  REDIS_PREFIX: string;
  MONGODB_CATALOG_DB: string;
  MONGODB_TENANT_DB_PREFIX: string;
}

/**
 * Unique names per benchmark so runs never see each other's data; the same env passed to several
 * nodes makes them one cluster. Rate limits are raised: the benchmarks measure throughput, not the
 * limiter (documented in docs/performance.md).
 */
export function productEnv(ctx: BenchContext, bench: string, extra: Record<string, string> = {}): ProductEnv {
  const id = `${bench}${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const objects = path.join(ctx.workDir, `objects-${id}`);
  mkdirSync(objects, { recursive: true });
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: '0',
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    // Every node of a run has its own metrics listener; a fixed port would refuse the second node of B2, B4, B5.
    METRICS_PORT: '0',
    BASE_DOMAIN: 'localhost',
    MONGODB_URI: ctx.mongoUri,
    MONGODB_CATALOG_DB: `bc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `bt_${id}_`,
    REDIS_URL: ctx.redisUrl,
    REDIS_PREFIX: `bench:${id}:`,
    STORAGE_DRIVER: 'fs',
    STORAGE_FS_ROOT: objects,
    PROVISIONING_CODE: `bench-provisioning-${id}`,
    RATE_LIMIT_PER_IP: '100000000',
    RATE_LIMIT_SIGNIN_PER_IP: '100000000',
    RATE_LIMIT_SIGNIN_PER_ACCOUNT: '100000000',
    RATE_LIMIT_TELEMETRY_PER_CREDENTIAL: '100000000',
    // Every benchmark client connects from 127.0.0.1: at the default (600 engine.io sessions per address
    // and window) B3 and B12 would measure the limiter after their first 600 connections (decision 1042).
    RATE_LIMIT_HUB_SESSIONS_PER_IP: '100000000',
    // The hub's per-socket bucket still runs on every call; at its defaults (burst 60, 20/s) 200 sockets
    // cannot exceed about 4,000 calls/s in a closed loop, which would measure the setting (decision 501).
    HUB_RATE_LIMIT_BURST: '1000000',
    HUB_RATE_LIMIT_PER_SECOND: '1000000',
    ...extra,
  };
}

/** The Host header a client sends to reach `tenant` on a node at `url`. */
export function tenantHost(url: string, tenant: string): string {
  return `${tenant}.localhost:${new URL(url).port}`;
}
