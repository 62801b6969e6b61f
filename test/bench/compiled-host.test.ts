/**
 * The benchmark harness starts its product nodes as production runs the service (decision 980): the
 * host and the product's modules as compiled JavaScript (bench/.build, src/ from dist/) with plain
 * `node --expose-gc`, no TypeScript loader in the process. Started through the harness's own
 * startProduct, a node answers its readiness, its fixtures mint a token the compiled node accepts, and
 * its process reports no loader; BENCH_RUNTIME picks the runtime and a `runtime-*` results name must
 * match it.
 */
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startProduct, stopProduct } from '../../bench/harness/sides.js';
import { buildDir, compiledPath, productNodeFlags, productRuntime } from '../../bench/harness/compiled.js';
import { projectRoot } from '../../bench/harness/paths.js';
import { outputBase } from '../../bench/harness/tree.js';
import type { HostProcess } from '../../bench/harness/hosts.js';
import type { BenchContext } from '../../bench/harness/types.js';
import type { ProductEnv } from '../../bench/harness/env.js';
import { testEnv } from '../support/env.js';
import { request } from '../support/http.js';
import { NODE_FLAGS } from '../../scripts/node-flags.mjs';

describe('the harness runtime setting', () => {
  it('runs product nodes compiled unless BENCH_RUNTIME=tsx, and refuses other values', () => {
    expect(productRuntime({})).toBe('compiled');
    expect(productRuntime({ BENCH_RUNTIME: 'tsx' })).toBe('tsx');
    expect(() => productRuntime({ BENCH_RUNTIME: 'ts-node' })).toThrow(/BENCH_RUNTIME must be one of/);
  });

  it("gives product nodes the product's node flags unless BENCH_PRODUCT_NODE_FLAGS names others (empty: none)", () => {
    expect(NODE_FLAGS).toEqual(['--max-semi-space-size=16']);
    expect(productNodeFlags({})).toEqual(NODE_FLAGS);
    expect(productNodeFlags({ BENCH_PRODUCT_NODE_FLAGS: '' })).toEqual([]);
    expect(productNodeFlags({ BENCH_PRODUCT_NODE_FLAGS: ' --max-semi-space-size=8  --no-opt ' })).toEqual([
      '--max-semi-space-size=8',
      '--no-opt',
    ]);
  });

  it('writes runtime-compiled.* only from a compiled run and runtime-tsx.* only from a tsx one', () => {
    const tree = { commit: 'a'.repeat(40), changes: [] };
    const named = (name: string, runtime: string) =>
      outputBase({ quick: false, selection: true, tree, allowDirty: false, name, runtime });
    expect(named('runtime-compiled', 'compiled')).toBe('runtime-compiled');
    expect(named('runtime-tsx', 'tsx')).toBe('runtime-tsx');
    expect(() => named('runtime-compiled', 'tsx')).toThrow(/needs BENCH_RUNTIME=compiled/);
    expect(() => named('runtime-tsx', 'compiled')).toThrow(/needs BENCH_RUNTIME=tsx/);
  });
});

describe('a product node started by the harness', () => {
  const env = testEnv({ ROLES: 'http' }) as ProductEnv;
  const ctx: BenchContext = {
    redisUrl: env.REDIS_URL!,
    mongoUri: env.MONGODB_URI!,
    mongoServers: { embedded: env.MONGODB_URI!, test: env.MONGODB_URI! },
    workDir: mkdtempSync(path.join(tmpdir(), 'bench-compiled-')),
    cacheDir: tmpdir(),
    log: () => undefined,
  };
  let node: HostProcess | undefined;

  beforeAll(async () => {
    delete process.env.BENCH_RUNTIME;
    node = await startProduct(ctx, 'compiled-test', 'node', env, { startTimeoutMs: 120_000 });
  }, 180_000);
  afterAll(() => stopProduct(ctx, [node], env), 60_000);

  it("runs the compiled host with plain node --expose-gc and the product's node flags: no TypeScript loader in its process", () => {
    expect(node!.runtime).toEqual({
      runtime: 'compiled',
      execArgv: ['--expose-gc', ...NODE_FLAGS],
      hostUrl: pathToFileURL(compiledPath('bench/harness/host.ts')).href,
      loader: false,
    });
    expect(compiledPath('bench/harness/host.ts')).toBe(path.join(buildDir, 'bench', 'harness', 'host.js'));
  });

  it("loads the product's modules from dist/, the build npm start runs", () => {
    expect(node!.info.nodeModule).toBe(
      pathToFileURL(path.join(realpathSync(projectRoot), 'dist', 'composition', 'node.js')).href,
    );
  });

  it('answers its readiness, and a token from its (compiled) fixtures is accepted', async () => {
    expect((await request(node!.info.url, 'GET', '/readyz')).status).toBe(200);
    await node!.call('tenant', { name: 'acme' });
    const [user] = await node!.call<{ token: string }[]>('users', {
      tenant: 'acme',
      prefix: 'bench',
      count: 1,
      role: 'clinician',
    });
    const me = await request(node!.info.url, 'GET', '/api/contacts/me', { tenant: 'acme', token: user!.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ displayName: 'Bench bench 0' });
  });

  it('reports its memory after a full collection (gc exposed without a loader)', async () => {
    const mem = await node!.mem();
    expect(mem.rss).toBeGreaterThan(0);
    expect(mem.heapUsed).toBeLessThan(mem.rss);
  });
});
