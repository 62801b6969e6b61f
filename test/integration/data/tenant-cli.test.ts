import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { LATEST_VERSION } from '../../../src/data/migrations/migrations.js';

const run = promisify(execFile);
/** Each CLI run starts a TypeScript process (a few seconds, much more on a loaded machine). */
const CLI_TEST_MS = 600_000;

/**
 * Runs `npm run tenant -- ...` the way an operator does (tsx, real process, real database). The line the
 * tool prints first, naming the database and Redis it writes to, is returned apart as `target`.
 */
async function cli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string; target: string }> {
  const split = (stderr: string) => {
    const m = /^\[tenant\] MongoDB [^\n]*\n/.exec(stderr);
    return { target: m?.[0] ?? '', stderr: m ? stderr.slice(m[0].length) : stderr };
  };
  try {
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli/tenant.cli.ts', ...args], {
      env: { ...process.env, ...env },
      timeout: 150_000,
    });
    return { code: 0, stdout: r.stdout, ...split(r.stderr) };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', ...split(err.stderr ?? '') };
  }
}

describe('tenant CLI (npm run tenant)', () => {
  let env: Record<string, string>;
  let node: TestNode;

  beforeAll(async () => {
    env = testEnv();
    node = await startTestNode({
      MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
      MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
    });
  });
  afterAll(async () => node.destroy());

  it(
    'creates, lists and migrates a tenant idempotently',
    async () => {
      const created = await cli(env, 'create', 'clinic-cli', 'CLI', 'Clinic');
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({
        tenant: { name: 'clinic-cli', displayName: 'CLI Clinic' },
        created: true,
        migration: { to: LATEST_VERSION },
      });

      const list = await cli(env, 'list');
      expect(list.stdout).toContain(`clinic-cli\tactive\tv${LATEST_VERSION}\tCLI Clinic`);

      const migrated = await cli(env, 'migrate', 'clinic-cli');
      expect(migrated.code).toBe(0);
      expect(JSON.parse(migrated.stdout)).toMatchObject({ from: LATEST_VERSION, applied: [] });
      expect((await node.services.tenants.resolve('clinic-cli'))?.displayName).toBe('CLI Clinic');
    },
    CLI_TEST_MS,
  );

  it(
    'reports bad input and missing tenants as one coded line with a failing exit code; create repeats safely',
    async () => {
      const bad = await cli(env, 'create', 'Bad_Name');
      expect(bad.code).toBe(1);
      expect(bad.stderr.trim()).toMatch(/^tenant: error \(validation_failed\): NAME: /);
      // Safe to repeat (docs/onboarding.md): the existing tenant is kept.
      const dup = await cli(env, 'create', 'clinic-cli');
      expect(dup.code).toBe(0);
      expect(JSON.parse(dup.stdout)).toMatchObject({ created: false, tenant: { displayName: 'CLI Clinic' } });
      const ghost = await cli(env, 'migrate', 'ghost');
      expect(ghost.stderr).toMatch(/^tenant: error \(tenant_not_found\)/);
      const usage = await cli(env, 'explode');
      expect(usage.code).toBe(64);
      expect(usage.stderr).toMatch(/^tenant: unknown command 'explode'\nusage:/);
    },
    CLI_TEST_MS,
  );

  it(
    'reports an unreachable database without a stack trace',
    async () => {
      const r = await cli({ ...env, MONGODB_URI: 'mongodb://127.0.0.1:9/', MONGODB_TIMEOUT_MS: '300' }, 'list');
      expect(r.code).toBe(69);
      expect(r.target).toMatch(/^\[tenant\] MongoDB mongodb:\/\/127\.0\.0\.1:9\//);
      expect(r.stderr).toMatch(/^tenant: error \(service_unavailable\): cannot reach MongoDB/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
    CLI_TEST_MS,
  );
});
