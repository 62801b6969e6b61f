import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io } from 'socket.io-client';
import { HUB_PATH } from '../../../src/hub/hub.server.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { dedicatedRedis, type DedicatedService } from '../../support/dedicated-services.js';
import { uniqueId } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { newEvent } from '../../support/events.js';
import { recorder, type HubClient } from '../../support/hub-client.js';
import { callLive, pause } from './chaos-agents.js';
import { recordResult, trace } from './results.js';

const JOBS = 5;

/** A hub client that reconnects by itself (the product's clients do), unlike the e2e helper's. */
function reconnectingClient(url: string, token: string): HubClient {
  const port = new URL(url).port;
  return io(url, {
    path: HUB_PATH,
    transports: ['websocket'],
    forceNew: true,
    reconnectionDelay: 200,
    reconnectionDelayMax: 1000,
    extraHeaders: { host: `acme.localhost:${port}` },
    auth: { token },
  });
}

/** Calls until acknowledged: while Redis is coming back a call may answer a retryable error. */
async function until<T = any>(
  s: HubClient,
  method: 'initEvent' | 'joinEvent' | 'notify',
  ...args: unknown[]
): Promise<T> {
  for (let i = 0; i < 80; i++) {
    const r = await callLive<T>(s, method, ...args);
    if (r.ok) return r.data;
    await pause(250);
  }
  throw new Error(`${method} never succeeded after the Redis restart`);
}

/**
 * A private Redis (AOF, appendfsync always) is killed and restarted under two hub nodes: queued jobs
 * survive and are run by a worker started afterwards, a worker running across a second restart
 * picks up new jobs, and sockets keep (or regain) cross-node delivery without anyone intervening.
 */
describe('faults: Redis restarted under load', () => {
  const id = uniqueId();
  let redis: DedicatedService;
  let env: Record<string, string>;
  const nodes: TestNode[] = [];
  const sockets: HubClient[] = [];
  let bob = '';

  beforeAll(async () => {
    redis = await dedicatedRedis('always');
    env = {
      ROLES: 'http,hub,actors',
      REDIS_URL: redis.url,
      MONGODB_CATALOG_DB: `tc_${id}`,
      MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
      REDIS_PREFIX: `test:${id}:`,
      ACTOR_SHARDS: '16',
      ACTOR_LEASE_MS: '1500',
      JOBS_BACKOFF_MS: '50',
    };
    nodes.push(await startTestNode(env), await startTestNode(env));
    await createUser(nodes[0]!, 'acme', { username: 'alice', role: 'clinician' });
    bob = await createUser(nodes[0]!, 'acme', { username: 'bob', role: 'clinician' });
  }, 90_000);
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    for (const n of nodes.slice(1).reverse()) await n.stop().catch(() => undefined);
    await nodes[0]?.destroy().catch(() => undefined);
    await redis?.destroy();
  });

  async function enqueueRecordings(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const e = await newEvent(nodes[0]!, 'acme');
      ids.push(
        (await nodes[0]!.services.recording.requestStart('acme', e._id.toHexString(), e.organizerId.toHexString()))
          .jobId!,
      );
    }
    return ids;
  }

  /**
   * Waits for each job in short slices: a completion event published while a queue-events reader
   * was reconnecting is not replayed, so each slice ends by reading the job's stored state.
   */
  async function allCompleted(node: TestNode, jobIds: string[]): Promise<void> {
    for (const j of jobIds) {
      let state = '';
      for (let i = 0; i < 30 && state !== 'completed' && state !== 'failed'; i++)
        state = (await node.services.jobs.waitUntilFinished('recording', j, 2_000)).state;
      expect(state).toBe('completed');
    }
    trace(`redis: ${jobIds.length} jobs completed`);
  }

  it('keeps queued jobs, recovers nodes and workers, and sockets deliver again', async () => {
    const queued = await enqueueRecordings(JOBS);
    await redis.kill();
    await redis.start();
    trace('redis: restarted with jobs queued');
    const worker = await startTestNode({ ...env, ROLES: 'workers' });
    nodes.push(worker);
    await allCompleted(nodes[0]!, queued);

    const host = await nodes[0]!.services.auth.verifyAccessToken('acme', await tokenFor(nodes[0]!, 'acme', 'alice'));
    const ev = await nodes[0]!.services.events.create(host, {
      name: 'After restart',
      startAt: new Date().toISOString(),
      endAt: new Date(Date.now() + 3_600_000).toISOString(),
      participants: [{ userId: bob, role: 'participant' }],
      attachments: [],
    });
    const eventId = String(ev._id);
    const alice = reconnectingClient(nodes[0]!.url!, await tokenFor(nodes[0]!, 'acme', 'alice'));
    sockets.push(alice);
    await new Promise<void>((r) => alice.once('connect', () => r()));
    await until(alice, 'initEvent', { eventId });
    let reconnects = 0;
    alice.io.on('reconnect', () => reconnects++);

    await redis.kill();
    await redis.start();
    trace('redis: restarted under a running worker and sockets');
    const later = await enqueueRecordingsRetrying(JOBS);
    await allCompleted(nodes[0]!, later);
    await until(alice, 'initEvent', { eventId });
    const watcher = reconnectingClient(nodes[1]!.url!, await tokenFor(nodes[1]!, 'acme', 'alice'));
    sockets.push(watcher);
    await new Promise<void>((r) => watcher.once('connect', () => r()));
    await until(watcher, 'initEvent', { eventId });
    const seen = recorder(watcher);
    const sent = await until(alice, 'notify', 'after-redis-restart', { eventId });
    expect(await seen.next('meetingEvent', (e) => e.data?.action === 'after-redis-restart')).toMatchObject({
      seq: sent.seq,
    });
    recordResult('redis-restart', {
      restarts: 2,
      persistence: 'appendonly yes, appendfsync always',
      queuedJobsKept: JOBS,
      jobsAfterRestart: JOBS,
      hubReconnects: reconnects,
    });
  }, 240_000);

  /** Enqueueing right after the restart may meet a reconnecting client: retry the 503s. */
  async function enqueueRecordingsRetrying(n: number): Promise<string[]> {
    for (let i = 0; i < 40; i++) {
      try {
        return await enqueueRecordings(n);
      } catch {
        await pause(250);
      }
    }
    throw new Error('could not enqueue after the Redis restart');
  }
});
