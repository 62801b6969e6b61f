/**
 * A cluster of real hub nodes (http, hub, actors) sharing databases and Redis prefix, with a tenant,
 * users with tokens and events to meet in: the subject of B1-B5 and B12.
 */
import { shardOf, rendezvousOwner } from '../../src/actors/runtime/placement.js';
import type { BenchContext } from './types.js';
import type { HostProcess } from './hosts.js';
import { productEnv, tenantHost, type ProductEnv } from './env.js';
import { startProduct, stopProduct } from './sides.js';

export const TENANT = 'bench';
export const HUB_PATH = '/hubs/mobile';

export interface BenchUser {
  username: string;
  id: string;
  token: string;
}

export class HubCluster {
  readonly nodes: (HostProcess | undefined)[] = [];
  readonly nodeIds: string[] = [];
  private seq = 0;

  constructor(
    private readonly ctx: BenchContext,
    private readonly bench: string,
    readonly env: ProductEnv,
  ) {}

  static create(ctx: BenchContext, bench: string, extra: Record<string, string> = {}): HubCluster {
    return new HubCluster(
      ctx,
      bench,
      productEnv(ctx, bench, { ROLES: 'http,hub,actors', ACCESS_TOKEN_TTL_SECONDS: '7200', ...extra }),
    );
  }

  /** Starts one more node of the cluster; returns its index. */
  async addNode(opts: { nofile?: number } = {}): Promise<number> {
    const nodeId = `${this.env.REDIS_PREFIX.replace(/:$/, '').replace(/[^a-z0-9]/gi, '')}-n${this.seq++}`;
    const host = await startProduct(this.ctx, this.bench, nodeId, { ...this.env, NODE_ID: nodeId }, opts);
    this.nodes.push(host);
    this.nodeIds.push(nodeId);
    return this.nodes.length - 1;
  }

  node(i: number): HostProcess {
    const n = this.nodes[i];
    if (!n) throw new Error(`node ${i} is not running`);
    return n;
  }

  target(i: number): { url: string; host: string } {
    const url = this.node(i).info.url as string;
    return { url, host: tenantHost(url, TENANT) };
  }

  async tenant(): Promise<void> {
    await this.node(0).call('tenant', { name: TENANT });
  }

  users(prefix: string, count: number, role: string, concurrency = 1): Promise<BenchUser[]> {
    return this.node(0).call('users', { tenant: TENANT, prefix, count, role, concurrency });
  }

  events(organizerIds: string[], participantIds: string[] = []): Promise<string[]> {
    return this.node(0).call('events', { tenant: TENANT, organizerIds, participantIds });
  }

  /** One meeting per organizer, meeting i with the participants `groups[i]`; their event ids in order. */
  meetings(organizerIds: string[], groups: string[][]): Promise<string[]> {
    return this.node(0).call('events', { tenant: TENANT, organizerIds, participantGroups: groups });
  }

  /** Which live node owns a meeting's actor (rendezvous over the live node ids, as the runtime places it). */
  meetingOwner(eventId: string, live: string[] = this.liveIds()): string | undefined {
    const shards = Number(this.env.ACTOR_SHARDS ?? 256);
    return rendezvousOwner(shardOf({ tenant: TENANT, kind: 'meeting', id: eventId }, shards), [...live].sort());
  }

  liveIds(): string[] {
    return this.nodeIds.filter((_, i) => this.nodes[i]);
  }

  /** Forgets a node that was killed. */
  dropped(i: number): void {
    this.nodes[i] = undefined;
  }

  stop(): Promise<void> {
    return stopProduct(this.ctx, this.nodes, this.env);
  }
}
