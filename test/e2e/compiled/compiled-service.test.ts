import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { COMPILED_MAIN, spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { request } from '../../support/http.js';
import { startTestNode, type TestNode } from '../../support/node.js';

// @ts-expect-error plain ESM script without types
const { ensureBuilt } = (await import('../../../scripts/build.mjs')) as { ensureBuilt: () => Promise<unknown> };
// @ts-expect-error plain ESM script without types
const { ensureNodeBinary } = (await import('../../../scripts/services.mjs')) as {
  ensureNodeBinary: (major: number) => string;
};

/**
 * The build production runs (decision 830): dist/ from `npm run build`, started with plain node and no
 * TypeScript loader, with every role (so the telemetry proto, the pages' browser scripts copied beside
 * the compiled modules and the lazily imported roles all load from dist/), on this machine's
 * Node.js and on the image's line (24) when that is another. A token minted by an in-process node on the same Redis and
 * databases is accepted by the compiled one.
 */
const binaries: [string, () => string][] = [[`the tests' Node.js (${process.version})`, () => process.execPath]];
if (!process.version.startsWith('v24.'))
  binaries.push(['Node.js 24, the image line', () => process.env.TEST_NODE24_BIN ?? ensureNodeBinary(24)]);

describe.each(binaries)('compiled service on %s', (_name, binary) => {
  const id = uniqueId();
  const shared = { MONGODB_CATALOG_DB: `tc_${id}`, MONGODB_TENANT_DB_PREFIX: `tt_${id}_`, REDIS_PREFIX: `test:${id}:` };
  let admin: TestNode;
  let child: ChildNode;
  let token: string;
  let version: string;

  beforeAll(async () => {
    await ensureBuilt();
    admin = await startTestNode({ ...shared, ROLES: 'http' });
    await createUser(admin, 'acme', { username: 'alice', role: 'clinician', displayName: 'Dr Alice' });
    token = await tokenFor(admin, 'acme', 'alice');
    const execPath = binary();
    version = spawnSync(execPath, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();
    // No ROLES: every role, as `npm start` runs it.
    child = await spawnChildNode(testEnv({ ...shared, NODE_ID: `compiled-${id}` }), 90_000, {
      execPath,
      args: COMPILED_MAIN,
    });
  }, 180_000);
  afterAll(async () => {
    if (child && child.proc.exitCode === null) await child.stop();
    await admin?.destroy();
  });

  it('runs dist/main.js with no loader and starts every role', () => {
    const args = child.proc.spawnargs.slice(1);
    expect(args).toEqual(COMPILED_MAIN);
    const roles = child.logs.filter((l) => l.msg === 'role started').map((l) => l.role);
    expect(roles).toEqual(expect.arrayContaining(['hub', 'actors', 'workers', 'telemetry', 'idp']));
  });

  it('is ready: Redis, MongoDB and the object store answer', async () => {
    const r = await request(child.url, 'GET', '/readyz');
    expect(r.status).toBe(200);
  });

  it('accepts a token of the tenant and answers an authenticated call', async () => {
    const r = await request(child.url, 'GET', '/api/contacts/me', { tenant: 'acme', token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ displayName: 'Dr Alice' });
    expect((await request(child.url, 'GET', '/api/contacts/me', { tenant: 'acme' })).status).toBe(401);
  });

  it('serves the browser scripts copied into dist/ and the bundle built from them', async () => {
    const init = await request(child.url, 'GET', '/api/docs/assets/init.js', { tenant: 'acme' });
    expect(init.status).toBe(200);
    expect(init.text).toContain('SwaggerUIBundle');
    const signin = await request(child.url, 'GET', '/web/assets/signin.js', { tenant: 'acme' });
    expect(signin.status).toBe(200);
  });

  it('warns in its log when its Node.js release is not a supported one (20 is tolerated, not supported)', () => {
    const warning = child.logs.find((l) => l.component === 'main' && l.nodeVersion === version);
    expect(Boolean(warning)).toBe(!/^v(22|24)\./.test(version));
  });
});
