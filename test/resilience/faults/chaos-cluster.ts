import type { Redis } from 'ioredis';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv } from '../../support/env.js';
import { request } from '../../support/http.js';
import { pause } from './chaos-agents.js';
import { trace } from './results.js';

/**
 * Three hub nodes as child processes (ROLES http,hub,actors) that the chaos driver stops (SIGTERM) or
 * hard-kills (SIGKILL) and restarts one at a time. Each incarnation gets a fresh NODE_ID, like a
 * rescheduled pod, so a restarted process never inherits a dead one's lease by name.
 */
export class ChaosCluster {
  readonly slots: (ChildNode | undefined)[] = [];
  readonly ids: string[] = [];
  kills = { sigterm: 0, sigkill: 0 };
  private generation = 0;

  constructor(private readonly shared: Record<string, string>, readonly size = 3) {}

  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.size }, (_, i) => this.spawn(i)));
  }

  private async spawn(slot: number): Promise<void> {
    const nodeId = `chaos-${slot}-g${this.generation++}`;
    this.slots[slot] = await spawnChildNode(testEnv({ ...this.shared, NODE_ID: nodeId, LOG_LEVEL: 'warn' }), 60_000);
    this.ids[slot] = nodeId;
    trace(`started ${nodeId}`);
  }

  liveUrls(): string[] {
    return this.slots.filter((c): c is ChildNode => !!c).map((c) => c.url);
  }

  liveIds(): string[] {
    return this.ids.filter((_, i) => this.slots[i]);
  }

  /** One fault: stop or kill the node in `slot`, then start a new incarnation there. */
  async fault(slot: number, hard: boolean): Promise<void> {
    const victim = this.slots[slot];
    this.slots[slot] = undefined;
    if (victim) {
      if (hard) await victim.kill();
      else await Promise.race([victim.stop(), pause(20_000)]).then(() => victim.kill());
      trace(`${hard ? 'SIGKILL' : 'SIGTERM'} ${this.ids[slot]}`);
      this.kills[hard ? 'sigkill' : 'sigterm']++;
    }
    await this.spawn(slot);
  }

  /**
   * Every `everyMs` until `until` (epoch ms), stops or kills one live node (alternating SIGKILL and
   * SIGTERM) while at least two are live; its restart runs in the background, so faults keep coming
   * while nodes boot and at times a single node carries every actor.
   */
  async chaos(until: number, everyMs: number): Promise<void> {
    const restarts: Promise<void>[] = [];
    for (let round = 0; Date.now() < until; round++) {
      await pause(everyMs);
      const live = this.slots.flatMap((c, i) => (c ? [i] : []));
      if (live.length < 2 || Date.now() >= until) continue;
      restarts.push(this.fault(live[round % live.length]!, round % 2 === 0));
    }
    await Promise.all(restarts);
  }

  /** Sum of a counter over the live nodes' /metrics (the dead ones took theirs with them). */
  async counterSum(name: string): Promise<number> {
    let sum = 0;
    for (const url of this.slots.filter((c): c is ChildNode => !!c).map((c) => c.metricsUrl)) {
      const r = await request(url, 'GET', '/metrics');
      for (const line of String(r.text).split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
    }
    return sum;
  }

  async destroy(): Promise<void> {
    for (const c of this.slots) await c?.kill();
  }
}

/**
 * Samples the lease of some shards in Redis during the run. A shard's lease value is `node|epoch`:
 * every epoch must belong to exactly one node and epochs must never go back, which together with the
 * epoch-fenced writes means no actor was ever written by two owners at once.
 */
export class LeaseSampler {
  readonly holders = new Map<number, Map<number, Set<string>>>();
  readonly regressions: string[] = [];
  samples = 0;
  private readonly last = new Map<number, number>();
  private timer?: NodeJS.Timeout;
  private readonly keys;

  constructor(private readonly redis: Redis, prefix: string, private readonly shards: number[]) {
    this.keys = actorKeys(`${prefix}actors:`);
  }

  start(everyMs = 100): void {
    this.timer = setInterval(() => void this.sample().catch(() => undefined), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    const values = await this.redis.mget(...this.shards.map((s) => this.keys.lease(s)));
    this.samples++;
    values.forEach((v, i) => {
      if (!v) return;
      const shard = this.shards[i]!;
      const node = v.slice(0, v.lastIndexOf('|'));
      const epoch = Number(v.slice(v.lastIndexOf('|') + 1));
      const byEpoch = this.holders.get(shard) ?? new Map<number, Set<string>>();
      this.holders.set(shard, byEpoch.set(epoch, (byEpoch.get(epoch) ?? new Set()).add(node)));
      if (epoch < (this.last.get(shard) ?? 0)) this.regressions.push(`shard ${shard}: epoch ${epoch} after ${this.last.get(shard)}`);
      this.last.set(shard, Math.max(epoch, this.last.get(shard) ?? 0));
    });
  }

  /** Epochs that were seen held by more than one node. */
  sharedEpochs(): string[] {
    const out: string[] = [];
    for (const [shard, byEpoch] of this.holders) for (const [epoch, nodes] of byEpoch) if (nodes.size > 1) out.push(`shard ${shard} epoch ${epoch}: ${[...nodes].join(',')}`);
    return out;
  }

  epochsSeen(): number {
    return [...this.holders.values()].reduce((n, m) => n + m.size, 0);
  }
}
