import { spawn, type ChildProcess } from 'node:child_process';
import type { ActorEventMap, ActorSystemEvents } from '../../src/actors/runtime/actor-events.js';
import path from 'node:path';
import { actorSystemOf, rendezvousOwner, shardOf, type RedisActorSystem } from '../../src/actors/runtime/index.js';
import type { ActorAddress, ActorBehavior } from '../../src/actors/runtime/types.js';
import type { PushPublisher } from '../../src/realtime/push-delivery.js';
import { uniqueId } from './env.js';
import { startTestNode, type TestNode } from './node.js';
import { primaries, type RedisClient } from '../../src/data/redis.js';

/** Settings shared by every node of one test cluster (same Redis prefix = same cluster). */
export function clusterEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ROLES: 'actors',
    REDIS_PREFIX: `test:${uniqueId()}:`,
    ACTOR_LEASE_MS: '600',
    ACTOR_SHARDS: '16',
    ACTOR_IDLE_MS: '60000',
    ...overrides,
  };
}

export interface ActorNode {
  node: TestNode;
  system: RedisActorSystem;
}

/**
 * Starts a node with the `actors` role, registers `behavior` on it and waits until it hosts actors.
 * `pushes`: where its actors push (given to the node at its start; default the Redis push relay).
 */
export async function startActorNode(
  env: Record<string, string>,
  behavior: ActorBehavior<any, any, any>,
  pushes?: PushPublisher,
): Promise<ActorNode> {
  const node = await startTestNode(env, pushes ? { pushes } : {});
  const system = actorSystemOf(node.roles);
  system.register(behavior);
  await system.ready();
  return { node, system };
}

/** Resolves with the arguments of the next `event` for which `match` holds. */
export function nextEvent<K extends keyof ActorEventMap>(
  emitter: ActorSystemEvents,
  event: K,
  match: (...args: ActorEventMap[K]) => boolean = () => true,
): Promise<ActorEventMap[K]> {
  return new Promise((resolve) => {
    const on = (...args: unknown[]) => {
      if (!match(...(args as ActorEventMap[K]))) return;
      emitter.off(event, on as never);
      resolve(args as ActorEventMap[K]);
    };
    emitter.on(event, on as never);
  });
}

/** Waits until `system` sees exactly `nodes` as the live hosting nodes. */
export async function waitForMembers(system: RedisActorSystem, nodes: string[]): Promise<void> {
  const want = [...nodes].sort().join(',');
  if (system.membership.nodes().join(',') === want) return;
  await nextEvent(system.events, 'membership', (live) => live.join(',') === want);
}

/** The first `call` actor address (ids `${prefix}0`, `${prefix}1`, ...) whose rendezvous owner is `owner`. */
export function addressOwnedBy(
  owner: string,
  nodes: string[],
  shards: number,
  prefix = 'a',
  tenant = 'acme',
): ActorAddress {
  for (let i = 0; ; i++) {
    const a: ActorAddress = { tenant, kind: 'call', id: `${prefix}${i}` };
    if (rendezvousOwner(shardOf(a, shards), [...nodes].sort()) === owner) return a;
  }
}

/**
 * Deletes every Redis key of a test prefix. On a cluster SCAN walks one master's keyspace, so every
 * master is scanned, and keys go one DEL each (keys of several slots in one DEL are refused).
 */
export async function dropPrefix(node: TestNode, prefix: string): Promise<void> {
  for (const redis of primaries(node.infra.redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      await Promise.all(keys.map((k) => redis.del(k)));
      cursor = next;
    } while (cursor !== '0');
  }
}

/**
 * Polls `system`'s connection watch until it has seen `node`'s inbox connection (so it may evict it),
 * first waiting for `node` in the system's membership (the watch looks only for members).
 */
export async function watchSees(system: RedisActorSystem, node: string): Promise<void> {
  while (!system.watch.sees(node)) {
    if (!system.membership.nodes().includes(node))
      await nextEvent(system.events, 'membership', (live) => live.includes(node));
    else await system.watch.poll();
  }
}

/**
 * Closes the Redis connections named `name` (CLIENT KILL, on every master), as a network fault or
 * a Redis-side close would; answers how many were closed. ioredis reconnects them (after 100 ms).
 */
export async function killConnection(redis: RedisClient, name: string): Promise<number> {
  let killed = 0;
  for (const server of primaries(redis)) {
    const list = String(await server.call('CLIENT', 'LIST', 'TYPE', 'normal'));
    for (const line of list.split('\n')) {
      const id = /(?:^|\s)id=(\d+)/.exec(line)?.[1];
      if (id && line.includes(` name=${name} `)) killed += Number(await server.call('CLIENT', 'KILL', 'ID', id));
    }
  }
  return killed;
}

export interface FixtureNode {
  child: ChildProcess;
  nodeId: string;
  ask<R = unknown>(to: ActorAddress, msg: unknown, opts?: { timeoutMs?: number; dedupeId?: string }): Promise<R>;
  next<T = any>(type: string): Promise<T>;
}

/** Spawns test/support/actor-fixtures/actor-node.fixture.ts as a separate actor node of the cluster. */
export async function spawnActorNode(env: Record<string, string>, nodeId: string): Promise<FixtureNode> {
  const fixture = path.resolve('test/support/actor-fixtures/actor-node.fixture.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390',
      ACTOR_KEY_PREFIX: `${env.REDIS_PREFIX}actors:`,
      ACTOR_SHARDS: env.ACTOR_SHARDS,
      ACTOR_LEASE_MS: env.ACTOR_LEASE_MS,
      ...(env.ACTOR_CONNECTION_POLL_MS ? { ACTOR_CONNECTION_POLL_MS: env.ACTOR_CONNECTION_POLL_MS } : {}),
      NODE_ID: nodeId,
      NODE_OPTIONS: '',
    },
  });
  let seq = 0;
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const on = (m: { type: string }) => {
        if (m.type !== type) return;
        child.off('message', on);
        child.off('exit', onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`fixture exited (${code}) before '${type}'`));
      child.on('message', on);
      child.once('exit', onExit);
    });
  const ready = next('ready');
  await ready;
  return {
    child,
    nodeId,
    next,
    ask: <R>(to: ActorAddress, msg: unknown, opts?: { timeoutMs?: number; dedupeId?: string }) => {
      const id = ++seq;
      const reply = new Promise<R>((resolve, reject) => {
        const on = (m: { type: string; id: number; ok: boolean; value: R; code?: string }) => {
          if (m.type !== 'reply' || m.id !== id) return;
          child.off('message', on);
          if (m.ok) resolve(m.value);
          else reject(Object.assign(new Error(m.code), { code: m.code }));
        };
        child.on('message', on);
      });
      child.send({ cmd: 'ask', id, to, msg, opts });
      return reply;
    },
  };
}

/** SIGKILLs a fixture node and waits for it to be gone. */
export function hardKill(f: FixtureNode, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (f.child.exitCode !== null || f.child.signalCode !== null) return Promise.resolve();
  const gone = new Promise<void>((r) => f.child.once('exit', () => r()));
  f.child.kill(signal);
  return gone;
}

/**
 * Gates for the counter fixture's `slow` hook: a turn of a gated seq number waits until the test opens its
 * gate (`entered` resolves once it waits); other turns wait `otherwise` (default a 5 ms timer).
 */
export function turnGates(otherwise: () => Promise<void> = () => new Promise<void>((r) => setTimeout(r, 5))) {
  const gates = new Map<number, { wait(): Promise<void> }>();
  return {
    slow: (seq: number): Promise<void> => gates.get(seq)?.wait() ?? otherwise(),
    gate(seq: number): { open(): void; entered: Promise<void> } {
      let open!: () => void;
      let enter!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      const entered = new Promise<void>((r) => (enter = r));
      gates.set(seq, { wait: () => (enter(), opened) });
      return { open, entered };
    },
  };
}
