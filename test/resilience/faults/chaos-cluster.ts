import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RedisClient } from '../../../src/data/redis.js';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { probeClock } from '../../../src/actors/runtime/turn-probe.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv } from '../../support/env.js';
import { liveHeapBytes } from '../../support/inspector.js';
import { request } from '../../support/http.js';
import type { RecordLine } from '../../support/turn-recorder.js';
import { pause, within } from './chaos-agents.js';
import { readRecordFile, refusedWrites } from './chaos-records.js';
import { trace } from './results.js';

/** How long one node may take to start (`node started`). */
export const START_TIMEOUT_MS = 120_000;

/** One freeze: the node stopped in the middle of a meeting turn's write, another node took the shard. */
export interface FreezeOutcome {
  node: string;
  actor: string;
  epoch: number;
  frozenMs: number;
  /** The frozen turn's write, sent after the resume: accepted by the store, or not. */
  accepted?: boolean;
  /** The node's actor_fenced_writes_total right after, between its refused writes recorded before and after the scrape. */
  fenced: { before: number; metric: number; after: number };
}

/**
 * Three hub nodes as child processes (ROLES http,hub,actors) that the chaos driver stops (SIGTERM),
 * hard-kills (SIGKILL) and restarts one at a time, or freezes (SIGSTOP) in the middle of a turn and
 * resumes. Each incarnation gets a fresh NODE_ID, like a rescheduled pod, so a restarted process never
 * inherits a dead one's lease by name. With a `recordDir` every node records its turns there (one file
 * each); without one (the fleet day) no recorder is loaded.
 */
export class ChaosCluster {
  readonly slots: (ChildNode | undefined)[] = [];
  readonly ids: string[] = [];
  /** Every incarnation started, the stopped and killed ones included (their logs are read after the run). */
  readonly incarnations: { id: string; node: ChildNode }[] = [];
  kills = { sigterm: 0, sigkill: 0 };
  readonly freezes: FreezeOutcome[] = [];
  /** Freezes armed but not caught (the node wrote no meeting turn while armed). */
  freezesMissed = 0;
  /** Slots frozen or being frozen: no other fault hits them, clients are not sent there. */
  private readonly busy = new Set<number>();
  private generation = 0;

  constructor(
    private readonly shared: Record<string, string>,
    readonly recordDir: string | undefined,
    readonly size = 3,
    private readonly name = 'chaos',
    /** Each node opens its V8 inspector (`liveHeapMb` reads its heap after a full collection). */
    private readonly inspect = false,
  ) {}

  recordFile(nodeId: string): string {
    if (!this.recordDir) throw new Error('this cluster records no turns');
    return path.join(this.recordDir, `${nodeId}.jsonl`);
  }

  /**
   * Starts the nodes one after another, each once the previous one serves: three starting at once on a
   * loaded 2-core machine each took as long as all three in a row, and together past their time limit.
   */
  async start(): Promise<void> {
    for (let i = 0; i < this.size; i++) await this.spawn(i);
  }

  /**
   * One incarnation in `slot`, from the compiled build (dist/, which the test builds first) with the turn
   * recorder compiled too: no TypeScript is transpiled at a start, so a start or restart costs about half
   * a tsx one, and restarts under load no longer decide how many faults fit in the run.
   */
  private async spawn(slot: number): Promise<void> {
    const nodeId = `${this.name}-${slot}-g${this.generation++}`;
    const record: Record<string, string> = this.recordDir
      ? { TURN_RECORD_FILE: this.recordFile(nodeId), TURN_FREEZE_ARM_MS: '4000' }
      : {};
    this.slots[slot] = await spawnChildNode(
      testEnv({ ...this.shared, ...record, NODE_ID: nodeId, LOG_LEVEL: 'warn' }),
      START_TIMEOUT_MS,
      { compiled: true, inspect: this.inspect },
    );
    this.ids[slot] = nodeId;
    this.incarnations.push({ id: nodeId, node: this.slots[slot]! });
    trace(`started ${nodeId}`);
  }

  /** URLs of the nodes serving now (neither down nor frozen). */
  liveUrls(): string[] {
    return this.serving().map((i) => this.slots[i]!.url);
  }

  private serving(): number[] {
    return this.slots.flatMap((c, i) => (c && !this.busy.has(i) ? [i] : []));
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
      else await within(victim.stop(), 20_000).then(() => victim.kill());
      trace(`${hard ? 'SIGKILL' : 'SIGTERM'} ${this.ids[slot]}`);
      this.kills[hard ? 'sigkill' : 'sigterm']++;
    }
    await this.spawn(slot);
  }

  /**
   * Every `everyMs` faults one serving node while at least two serve, in the order SIGKILL, freeze,
   * SIGTERM, SIGKILL, over and over (a freeze hits the node `freezeTarget` names: one holding a
   * meeting's lease). Restarts and freezes run in the background, so faults keep coming while
   * nodes boot and at times a single node carries every actor. Runs until `until` (epoch ms) and until
   * at least `min` stops/kills and freezes were done, whichever is later (a loaded machine boots
   * nodes slowly; the run then lasts longer rather than asserting less), but never past `cap`.
   */
  async chaos(
    run: { until: number; cap: number; everyMs: number; min: { kills: number; freezes: number } },
    freezeTarget: () => Promise<string | undefined>,
    poke: (actor: string, url: string) => Promise<void>,
  ): Promise<void> {
    const pending: Promise<unknown>[] = [];
    const done = () =>
      this.kills.sigkill + this.kills.sigterm >= run.min.kills && this.freezes.length >= run.min.freezes;
    for (let issued = 0; (Date.now() < run.until || !done()) && Date.now() < run.cap;) {
      await pause(run.everyMs);
      const serving = this.serving();
      if (serving.length < 2) continue;
      if (issued % 4 === 1) {
        const target = this.ids.indexOf((await freezeTarget()) ?? '');
        if (!serving.includes(target)) continue;
        pending.push(this.freeze(target, poke));
      } else {
        pending.push(this.fault(serving[issued % serving.length]!, issued % 4 !== 2));
      }
      issued++;
      // The last faults' restarts and freezes finish before the minimum is judged.
      if (Date.now() >= run.until && !done()) await Promise.all(pending);
    }
    await Promise.all(pending);
  }

  /**
   * Arms the node's recorder (SIGUSR2), which stops the process right before its next meeting write;
   * `poke` then makes a serving node take that meeting's shard; SIGCONT lets the frozen write go out
   * under the superseded epoch. Records what the store answered and the node's fenced-write counter.
   */
  async freeze(slot: number, poke: (actor: string, url: string) => Promise<void>): Promise<void> {
    const node = this.slots[slot]!;
    const id = this.ids[slot]!;
    this.busy.add(slot);
    let stopped = false;
    try {
      const skip = readRecordFile(this.recordFile(id)).length;
      const fresh = () => readRecordFile(this.recordFile(id)).slice(skip);
      node.proc.kill('SIGUSR2');
      let caught: Extract<RecordLine, { t: 'freeze' }> | undefined;
      for (const t0 = Date.now(); !caught; await pause(20)) {
        const lines = fresh();
        caught = lines.find((l) => l.t === 'freeze') as typeof caught;
        const armed = lines.find((l) => l.t === 'armed') as Extract<RecordLine, { t: 'armed' }> | undefined;
        // The recorder decides on the same clock: past its deadline with no freeze line, none will come.
        if (!caught && armed && probeClock() > armed.until + 50 && !fresh().some((l) => l.t === 'freeze')) break;
        if (!armed && Date.now() - t0 > 20_000) throw new Error(`${id} never armed its freeze`);
      }
      if (!caught) {
        this.freezesMissed++;
        return;
      }
      stopped = true;
      await waitStopped(node.proc.pid!);
      trace(`SIGSTOP ${id} in a write of ${caught.actor} (epoch ${caught.epoch})`);
      await poke(caught.actor, this.liveUrls()[0]!);
      const frozenMs = probeClock() - caught.at;
      node.proc.kill('SIGCONT');
      stopped = false;
      const isFrozenTurn = (l: RecordLine) =>
        l.t === 'turn' &&
        l.actor === caught.actor &&
        l.epoch === caught.epoch &&
        l.writes.some((w) => w.sent > caught.at);
      let turn: Extract<RecordLine, { t: 'turn' }> | undefined;
      for (const t0 = Date.now(); !(turn = fresh().find(isFrozenTurn) as typeof turn); await pause(20)) {
        if (Date.now() - t0 > 30_000)
          throw new Error(`${id} resumed but never finished the frozen turn of ${caught.actor}`);
      }
      const before = refusedWrites(readRecordFile(this.recordFile(id)));
      const metric = await this.counter(slot, 'actor_fenced_writes_total');
      const after = refusedWrites(readRecordFile(this.recordFile(id)));
      const accepted = turn.writes.find((w) => w.sent > caught.at)!.accepted;
      this.freezes.push({
        node: id,
        actor: caught.actor,
        epoch: caught.epoch,
        frozenMs: Math.round(frozenMs),
        accepted,
        fenced: { before, metric, after },
      });
      trace(
        `SIGCONT ${id} after ${Math.round(frozenMs)} ms: frozen write ${accepted ? 'ACCEPTED' : 'refused'}, fenced ${metric}`,
      );
    } finally {
      if (stopped) node.proc.kill('SIGCONT');
      this.busy.delete(slot);
    }
  }

  /** A counter of one node's /metrics, summed over its labels. */
  async counter(slot: number, name: string): Promise<number> {
    const r = await request(this.slots[slot]!.metricsUrl, 'GET', '/metrics');
    return String(r.text)
      .split('\n')
      .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  }

  /** The heap a serving node holds after a full garbage collection, in MiB (a cluster started with `inspect`). */
  async liveHeapMb(slot: number): Promise<number> {
    const url = this.slots[slot]?.inspectorUrl;
    if (!url) throw new Error(`node in slot ${slot} has no inspector (start the cluster with inspect)`);
    return Math.round((await liveHeapBytes(url)) / 2 ** 20);
  }

  /** Serving slots with their node ids. */
  servingIds(): { slot: number; id: string }[] {
    return this.serving().map((slot) => ({ slot, id: this.ids[slot]! }));
  }

  async destroy(): Promise<void> {
    for (const c of this.slots) await c?.kill();
  }
}

/** Resolves once the process is stopped (state T in /proc), which SIGSTOP makes it at once. */
async function waitStopped(pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    await pause(10);
  }
  throw new Error(`process ${pid} wrote its freeze line but did not stop`);
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
  /** Failed samples, with the first few messages: counted and asserted, never swallowed. */
  errors = 0;
  readonly errorMessages: string[] = [];
  private readonly last = new Map<number, number>();
  private timer?: NodeJS.Timeout;
  private startedAt = 0;
  private stoppedAt = 0;
  private readonly keys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly shards: number[],
  ) {
    this.keys = actorKeys(`${prefix}actors:`);
  }

  start(everyMs = 100): void {
    this.startedAt = Date.now();
    this.timer = setInterval(() => {
      this.sample().catch((e: Error) => {
        this.errors++;
        if (this.errorMessages.length < 5) this.errorMessages.push(e.message);
      });
    }, everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.stoppedAt = Date.now();
  }

  /** Samples per second while it ran. */
  rate(): number {
    return this.samples / Math.max(0.001, ((this.stoppedAt || Date.now()) - this.startedAt) / 1000);
  }

  /** Every `node|epoch` seen, per shard. */
  seen(): { shard: number; epoch: number; node: string }[] {
    return [...this.holders].flatMap(([shard, byEpoch]) =>
      [...byEpoch].flatMap(([epoch, nodes]) => [...nodes].map((node) => ({ shard, epoch, node }))),
    );
  }

  private async sample(): Promise<void> {
    // One GET per shard (auto-pipelined): shards hash to different cluster slots, so no MGET across them.
    const values = await Promise.all(this.shards.map((s) => this.redis.get(this.keys.lease(s))));
    this.samples++;
    values.forEach((v, i) => {
      if (!v) return;
      const shard = this.shards[i]!;
      const node = v.slice(0, v.lastIndexOf('|'));
      const epoch = Number(v.slice(v.lastIndexOf('|') + 1));
      const byEpoch = this.holders.get(shard) ?? new Map<number, Set<string>>();
      this.holders.set(shard, byEpoch.set(epoch, (byEpoch.get(epoch) ?? new Set()).add(node)));
      if (epoch < (this.last.get(shard) ?? 0))
        this.regressions.push(`shard ${shard}: epoch ${epoch} after ${this.last.get(shard)}`);
      this.last.set(shard, Math.max(epoch, this.last.get(shard) ?? 0));
    });
  }

  /** Epochs that were seen held by more than one node. */
  sharedEpochs(): string[] {
    const out: string[] = [];
    for (const [shard, byEpoch] of this.holders)
      for (const [epoch, nodes] of byEpoch)
        if (nodes.size > 1) out.push(`shard ${shard} epoch ${epoch}: ${[...nodes].join(',')}`);
    return out;
  }

  epochsSeen(): number {
    return [...this.holders.values()].reduce((n, m) => n + m.size, 0);
  }
}
