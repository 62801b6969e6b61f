import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config/config.js';

/**
 * A short id unique to this test run and file, used to keep databases, keys and queues apart. Under jest
 * it starts with the run's tag (test/support/global-teardown.ts), by which the run's teardown finds what
 * its tests left.
 */
export function uniqueId(): string {
  return `${process.env.TEST_RUN_TAG ?? ''}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const id = uniqueId();
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    GRPC_HOST: '127.0.0.1',
    METRICS_PORT: '0',
    GRPC_PORT: '0',
    BASE_DOMAIN: 'localhost',
    MONGODB_URI: process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27027/',
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390',
    REDIS_PREFIX: `test:${id}:`,
    STORAGE_FS_ROOT: mkdtempSync(path.join(tmpdir(), 'consult-objects-')),
    PROVISIONING_CODE: `provisioning-${id}-secret`,
    NODE_ID: `n-${id}`,
    // Every test client is 127.0.0.1, so one file's requests share one address: the per-address limits
    // stay on, at ten times the production default; rate-limit tests set their own low values.
    RATE_LIMIT_PER_IP: '6000',
    RATE_LIMIT_HUB_SESSIONS_PER_IP: '6000',
    RATE_LIMIT_TELEMETRY_PER_CREDENTIAL: '60000',
    ...overrides,
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig(testEnv(overrides));
}
