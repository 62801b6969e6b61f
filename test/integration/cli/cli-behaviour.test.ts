import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { requireSettings } from '../../../src/cli/cli-kit.js';
import { uniqueId } from '../../support/env.js';
// @ts-expect-error plain ESM script without types
import { commandFor } from '../../../scripts/cli.mjs';

const run = promisify(execFile);
const testMongo = process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27027/';
const testRedis = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390';

const TOOLS = {
  tenant: 'src/cli/tenant.cli.ts',
  keys: 'src/cli/keys.cli.ts',
  telemetry: 'src/cli/telemetry.cli.ts',
  'audit-verify': 'src/cli/audit-verify.cli.ts',
} as const;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool's module as `npm run <tool>` does (the sources here: the suite does not build dist/). */
async function tool(name: keyof typeof TOOLS, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', TOOLS[name], ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

describe('command-line tools: help, usage, settings and errors', () => {
  const id = uniqueId();
  const catalog = `tcb_${id}`;
  const env: NodeJS.ProcessEnv = {
    MONGODB_URI: testMongo,
    REDIS_URL: testRedis,
    MONGODB_CATALOG_DB: catalog,
    MONGODB_TENANT_DB_PREFIX: `tcb_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
  };
  afterAll(async () => {
    const client = await MongoClient.connect(testMongo);
    try {
      await client.db(catalog).dropDatabase();
      await client.db(`tcb_${id}_clinic`).dropDatabase();
    } finally {
      await client.close();
    }
  });

  it('--help prints the usage and succeeds; an unknown command says which, with the usage', async () => {
    for (const name of Object.keys(TOOLS) as (keyof typeof TOOLS)[]) {
      const help = await tool(name, ['--help']);
      expect({ name, code: help.code, stderr: help.stderr }).toEqual({ name, code: 0, stderr: '' });
      expect(help.stdout).toMatch(/^usage: npm run /);
    }
    for (const name of ['tenant', 'keys', 'telemetry'] as const) {
      const unknown = await tool(name, ['frobnicate']);
      expect({ name, code: unknown.code }).toEqual({ name, code: 64 });
      expect(unknown.stderr).toMatch(new RegExp(`^${name}: unknown command 'frobnicate'\\nusage: npm run ${name}`));
      expect(unknown.stdout).toBe('');
    }
    const audit = await tool('tenant', ['audit', 'frobnicate', 'clinic']);
    expect(audit.code).toBe(64);
    expect(audit.stderr).toMatch(/^tenant: unknown command 'audit frobnicate'/);
    const option = await tool('audit-verify', ['--frobnicate', 'x.ndjson']);
    expect(option.code).toBe(64);
    expect(option.stderr).toMatch(/^audit-verify: unknown option '--frobnicate'/);
  }, 120_000);

  it('`npm run <tool>` runs the compiled build with plain node (built first when the sources changed)', async () => {
    const entry = (await (commandFor as (t: string) => Promise<string[]>)('tenant')) as string[];
    expect(entry).toEqual([path.resolve('dist/cli/tenant.cli.js')]);
    const { stdout } = await run(process.execPath, ['scripts/cli.mjs', 'tenant', '--help'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect(stdout).toMatch(/^usage: npm run tenant -- create NAME/);
  }, 120_000);

  it('refuses to run without settings instead of using whatever database listens on the default port', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'cli-root-'));
    expect(() => requireSettings('tenant', {}, root)).toThrow(/\[tenant\] no settings: MONGODB_URI and REDIS_URL/);
    // Any of these says which deployment is meant.
    expect(() => requireSettings('tenant', { MONGODB_URI: testMongo }, root)).not.toThrow();
    expect(() => requireSettings('tenant', { LOCAL_MONGO_PORT: '27017' }, root)).not.toThrow();
    const recorded = mkdtempSync(path.join(tmpdir(), 'cli-root-'));
    const local = path.join(recorded, '.local');
    mkdirSync(local);
    writeFileSync(path.join(local, 'services.json'), JSON.stringify({ mongoUri: testMongo }));
    expect(() => requireSettings('tenant', {}, recorded)).not.toThrow();
  });

  it('fails (not a warning and exit 0) when Redis refuses its credentials', async () => {
    const noPassword = new URL(testRedis);
    noPassword.username = '';
    noPassword.password = 'not-the-password';
    const r = await tool('tenant', ['list'], { ...env, REDIS_URL: noPassword.href });
    expect(r.code).toBe(69);
    expect(r.stderr).toMatch(/tenant: error \(service_unavailable\): cannot use Redis at redis:\/\/:\*\*\*@/);
    expect(r.stdout).toBe('');
  }, 60_000);

  it('`tenant create` is safe to repeat, and errors name the command line arguments', async () => {
    const first = await tool('tenant', ['create', 'clinic', 'The Clinic', '--admin', 'boss'], env);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: true, tenant: { name: 'clinic' } });
    const again = await tool('tenant', ['create', 'clinic', '--admin', 'boss'], env);
    expect({ code: again.code, stderr: again.stderr }).toMatchObject({ code: 0 });
    const body = JSON.parse(again.stdout);
    expect(body).toMatchObject({ created: false, tenant: { name: 'clinic', displayName: 'The Clinic' } });
    // The admin has not set a password yet: a new link replaces the first.
    expect(body.admin).toMatchObject({ username: 'boss', ready: false, setPasswordUrl: expect.any(String) });
    expect(body.admin.setPasswordUrl).not.toBe(JSON.parse(first.stdout).admin.setPasswordUrl);

    const badName = await tool('tenant', ['create', 'Bad_Name'], env);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/tenant: error \(validation_failed\): NAME: lowercase letters/);
    expect(badName.stderr).not.toMatch(/tenantName/);
    const badEmail = await tool('tenant', ['create', 'clinic', '--admin', 'boss', '--admin-email', 'nope'], env);
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toMatch(/\n {2}--admin-email: /);
    expect(badEmail.stderr).not.toMatch(/(^|\s)(admin\.)?email:/m);
  }, 120_000);
});
