import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestNode, type TestNode } from '../../support/node.js';
// @ts-expect-error plain ESM script without types
import { ensureRedisCluster, stopRedisCluster } from '../../../scripts/redis-cluster.mjs';

const clusterDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.local/redis-cluster');

/** Resolves true when nothing listens on 127.0.0.1:port (bound and released at once). */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Three ports for a private cluster: each free, and its cluster bus port (port + 10000) free and below
 * 65536, which rules out the kernel's ephemeral range.
 */
async function clusterPorts(): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < 3) {
    const p = 20_000 + Math.floor(Math.random() * 9_000);
    if (ports.includes(p) || ports.includes(p + 10_000) || ports.includes(p - 10_000)) continue;
    if ((await free(p)) && (await free(p + 10_000))) ports.push(p);
  }
  return ports;
}

/**
 * /readyz on a Redis Cluster: a master lost with no replica to take its slots leaves the cluster in
 * `cluster_state:fail`, and a node that cannot reach every slot is not ready (503, with the reason).
 * The cluster is this file's own (scripts/redis-cluster.mjs on free ports), as one of its masters dies
 * and comes back.
 */
describe('/readyz on a Redis Cluster', () => {
  let ports: number[];
  let node: TestNode;

  beforeAll(async () => {
    ports = await clusterPorts();
    const url = (await ensureRedisCluster(ports)) as string;
    node = await startTestNode({ REDIS_URL: url });
  }, 120_000);

  afterAll(async () => {
    if (!ports) return;
    // A master the test killed is back first (if a check failed before the test restarted it), so the
    // node's connections close cleanly; then the node stops, and the cluster with its data goes.
    await (ensureRedisCluster(ports) as Promise<string>).catch(() => undefined);
    await node?.destroy();
    await (stopRedisCluster(ports) as Promise<void>).catch(() => undefined);
    for (const p of ports) rmSync(path.join(clusterDir, String(p)), { recursive: true, force: true });
  }, 90_000);

  it('is ready while every master reports cluster_state:ok, and not ready once a master failed', async () => {
    const before = await node.http.get('/readyz');
    expect(before.status).toBe(200);
    expect(before.body.checks.redis).toMatchObject({ status: 'up' });

    const [, , lost] = ports;
    process.kill(Number(readFileSync(path.join(clusterDir, String(lost), 'pid'), 'utf8')), 'SIGKILL');
    // The other two masters mark it failed after cluster-node-timeout (5 s) and lose slot coverage, each
    // on its own clock: the check waits for both (breaking at the first one's failure read the other's as
    // still ok now and then, in a CI run).
    const bothFailed = (error: unknown) =>
      ports.slice(0, 2).every((p) => String(error).includes(`cluster_state:fail on 127.0.0.1:${p}`));
    let after: Awaited<ReturnType<typeof node.http.get>> | undefined;
    const until = Date.now() + 30_000;
    do {
      after = await node.http.get('/readyz');
      if (bothFailed(after.body.checks.redis.error)) break;
      await new Promise((r) => setTimeout(r, 250));
    } while (Date.now() < until);
    expect(after.status).toBe(503);
    expect(after.body.status).toBe('not_ready');
    expect(after.body.checks.redis.status).toBe('down');
    for (const p of ports.slice(0, 2))
      expect(after.body.checks.redis.error).toContain(`cluster_state:fail on 127.0.0.1:${p}`);
    expect(after.body.checks.mongodb.status).toBe('up');

    // The master back (its nodes.conf keeps the slots): the cluster and the node are ready again.
    await ensureRedisCluster(ports);
    let back = await node.http.get('/readyz');
    while (back.status !== 200 && Date.now() < until + 30_000) {
      await new Promise((r) => setTimeout(r, 250));
      back = await node.http.get('/readyz');
    }
    expect(back.body).toMatchObject({ status: 'ready', checks: { redis: { status: 'up' } } });
  }, 90_000);
});
