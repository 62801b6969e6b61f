import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { cliEnvironment, redact } from '../../../src/config/local-services.js';
import { uniqueId } from '../../support/env.js';

const run = promisify(execFile);
const testMongo = process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27027/';
const testRedis = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390';
const portOf = (u: string) => new URL(u).port;

describe('command-line tools read the settings the service gets', () => {
  it('`npm run tenant` writes to the MongoDB on LOCAL_MONGO_PORT and says so before writing', async () => {
    const id = uniqueId();
    const catalog = `tc_${id}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOCAL_MONGO_PORT: portOf(testMongo),
      REDIS_URL: testRedis,
      MONGODB_CATALOG_DB: catalog,
      MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
      REDIS_PREFIX: `test:${id}:`,
    };
    const { stdout, stderr } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/tenant.cli.ts',
        'create',
        'clinic',
        'The Clinic',
        '--admin',
        'boss',
        '--admin-email',
        'boss@clinic.org',
      ],
      { env },
    );
    expect(stderr).toContain(`[tenant] MongoDB mongodb://127.0.0.1:${portOf(testMongo)}/ (catalog ${catalog})`);
    // The first admin and the one-time link to hand over (docs/onboarding.md).
    expect(JSON.parse(stdout).admin).toMatchObject({
      username: 'boss',
      role: 'admin',
      created: true,
      ready: false,
      setPasswordUrl: expect.stringContaining('/realms/clinic/set-password?token='),
    });
    const client = await MongoClient.connect(testMongo);
    try {
      const tenants = await client.db(catalog).collection('tenants').find({}).toArray();
      expect(tenants.map((t) => t.name)).toEqual(['clinic']);
    } finally {
      await client.db(catalog).dropDatabase();
      await client.db(`tt_${id}_clinic`).dropDatabase();
      await client.close();
    }
  }, 60_000);

  it('prefers an explicit URL, then the recorded local servers on the same port, then the port', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'cli-env-'));
    mkdirSync(path.join(root, '.local'));
    writeFileSync(
      path.join(root, '.local', 'services.json'),
      JSON.stringify({ mongoUri: 'mongodb://127.0.0.1:27027/', redisUrl: 'redis://svc:pw@127.0.0.1:6390' }),
    );
    expect(cliEnvironment({}, root)).toMatchObject({
      MONGODB_URI: 'mongodb://127.0.0.1:27027/',
      REDIS_URL: 'redis://svc:pw@127.0.0.1:6390',
    });
    expect(cliEnvironment({ LOCAL_REDIS_PORT: '6390', LOCAL_MONGO_PORT: '27100' }, root)).toMatchObject({
      MONGODB_URI: 'mongodb://127.0.0.1:27100/',
      REDIS_URL: 'redis://svc:pw@127.0.0.1:6390',
    });
    expect(cliEnvironment({ LOCAL_REDIS_PORT: '6400' }, root)).toMatchObject({ REDIS_URL: 'redis://127.0.0.1:6400' });
    expect(cliEnvironment({ REDIS_URL: 'redis://x:1', LOCAL_REDIS_PORT: '6400' }, root)).toMatchObject({
      REDIS_URL: 'redis://x:1',
    });
    const empty = mkdtempSync(path.join(tmpdir(), 'cli-env-'));
    expect(cliEnvironment({}, empty).MONGODB_URI).toBeUndefined();
    expect(redact('redis://svc:pw@127.0.0.1:6390')).toBe('redis://svc:***@127.0.0.1:6390');
  });
});
