/**
 * Reconnect storm (B12): `clients` connections spread round-robin over the nodes, each a member of one
 * meeting (a group of the process's clients); the process's host, connected to a surviving node, sends
 * each meeting a `notify` every `pushEveryMs` (staggered), and reads (`details`) go to random connected
 * members at `probesPerS`. After `ready` the harness says `start`, kills node `victim` and says `killed`
 * (with the wall-clock time of the SIGKILL). The victim's clients reconnect by themselves (socket.io's
 * default backoff) to another node (the next in their list: what a load balancer in front does) and
 * join their meeting again; the storm ends when every one of them is back (or after `stormMaxMs`), the
 * pushes go on for `tailMs`, and the process waits for the deliveries still due.
 *
 * `mode: 'product'`: the SDK's HubClient (packages/client), which hands its last positions over at every
 * reconnection (`auth.resume`), drops duplicates and holds pushes behind a gap, and joins its meetings
 * again; `cred` is an access token. `mode: 'bare'`: plain socket.io-client against the bare server
 * (`join`, `notify`, `details`), joining its room again after a reconnection; `cred` is a name.
 *
 * Reported (the harness merges the processes), per victim, the time from the kill until: it is connected
 * again (`reconnected`); pushes flow to it again (product: `pushStreams`; bare: its room joined) and it
 * has every push acknowledged to the host before it reconnected that it will get (`resumed`: the replay,
 * for the product); it has also joined its meeting again (`rejoined`: the SDK's joinEvent; for the bare
 * clients the room join, so the same as resumed). Then: pushes acknowledged to the host that a member
 * never received (`missed`), and of those acknowledged while a victim was away, how many it received
 * (`recovered`); and the latency of every hub call started during the storm (host notifies, reads, the
 * victims' joins).
 */
import { z } from 'zod';
import { io, type Socket } from 'socket.io-client';
import { HubClient } from '../../packages/client/src/hub.js';
import { params, finish, deadline, tell, waitFor, sleep } from './common.js';
import { account, isRejoined, type CallSample, type Mark, type MemberRecord } from './storm-accounting.js';

const P = z.object({
  mode: z.enum(['product', 'bare']),
  /** Every node's address (`host`: the Host header's tenant name, product only); the victim is one of them. */
  targets: z.array(z.object({ url: z.string(), host: z.string().optional() })).min(2),
  path: z.string(),
  victim: z.number().int().nonnegative(),
  /** This process's first client's index in the whole run (node = index modulo the number of nodes). */
  firstIndex: z.number().int().nonnegative(),
  clients: z.array(z.object({ cred: z.string(), group: z.number().int().nonnegative() })).min(1),
  /** Meetings (event id, or room name for the bare server); `failover`: its actor lived on the victim. */
  groups: z.array(z.object({ id: z.string(), failover: z.boolean().default(false) })).min(1),
  host: z.object({ cred: z.string(), node: z.number().int().nonnegative() }),
  parallel: z.number().int().positive().default(25),
  pushEveryMs: z.number().int().positive(),
  probesPerS: z.number().nonnegative(),
  tailMs: z.number().int().nonnegative(),
  stormMaxMs: z.number().int().positive(),
  settleMs: z.number().int().nonnegative(),
  ackTimeoutMs: z.number().int().positive().default(20_000),
  deadlineMs: z.number().int().positive(),
});
const p = params(P);
deadline(p.deadlineMs);

/** Wall clock: the harness's kill time is its Date.now() on the same machine. */
const t = (): number => Date.now();

/** `open`: the host opens the meeting (product: initEvent; bare: join); `join`: a member joins it. */
type Kind = 'open' | 'join' | 'notify' | 'details';

interface Conn {
  connect(): Promise<void>;
  call(kind: Kind, group: number, mark?: number): Promise<void>;
  connected(): boolean;
  close(): void;
}

interface Member extends MemberRecord {
  /** Index of the client in the whole run. */
  global: number;
  /** The node it is connected to (or trying). */
  node: number;
  conn?: Conn;
  /** Reconnection attempts after the kill, and why attempts failed (the timeline's diagnosis). */
  attempts?: number;
  /** When its last reconnection attempt began, and when that attempt's transport opened (engine.io). */
  attemptAt?: number;
  openAt?: number;
}

/** Why connection attempts after the kill failed: message (numbers left out) -> count. */
const connectErrors = new Map<string, number>();

const n = p.targets.length;
const members: Member[] = p.clients.map((c, i) => ({
  global: p.firstIndex + i,
  group: c.group,
  node: (p.firstIndex + i) % n,
  victim: (p.firstIndex + i) % n === p.victim,
  received: new Map(),
  duplicates: 0,
  resyncs: 0,
}));
const byGroup: Member[][] = p.groups.map(() => []);
for (const m of members) byGroup[m.group]!.push(m);
const victims = members.filter((m) => m.victim);
const marks: Mark[] = [];
let killAt: number | undefined;
let stormEnd: number | undefined;
let earlyDisconnects = 0;
/** Members that never received their meeting's closing push within settleMs. */
let unclosed = 0;
const calls: CallSample[] = [];
let failedCalls = 0;
/** Why calls started during the storm failed: message (numbers left out) -> count. */
const failures = new Map<string, number>();
/** Product: the meeting's `seq` each storm push carried (diagnosis of a miss: was the turn run?). */
const seqOf = new Map<number, number>();

function failed(what: string): void {
  failedCalls++;
  const key = what.replace(/\d+/g, 'N');
  failures.set(key, (failures.get(key) ?? 0) + 1);
}

function urlOf(node: number): string {
  const target = p.targets[node]!;
  return p.mode === 'product' && target.host ? `http://${target.host}` : target.url;
}

/**
 * The next node a reconnection tries: away from the one it lost, spread over the others by the client's
 * index (a client that lost node v goes to v+1 or v+2 of three, never back to v first).
 */
function rotate(m: Member, manager: unknown): void {
  if (killAt !== undefined) {
    m.attempts = (m.attempts ?? 0) + 1;
    m.attemptAt = t();
  }
  m.node = (m.node + 1 + (m.global % (n - 1))) % n;
  (manager as { uri: string }).uri = urlOf(m.node);
}

function timed(kind: Kind, group: number, run: () => Promise<void>): Promise<boolean> {
  const start = t();
  return run().then(
    () => {
      calls.push({ start, ms: t() - start, failover: p.groups[group]!.failover });
      return true;
    },
    (e: Error) => {
      if (killAt === undefined || start < killAt) return false;
      failed(`${kind}: ${e.message}`);
      return false;
    },
  );
}

function opened(m: Member): void {
  if (m.attemptAt !== undefined && m.connectAt === undefined) m.openAt = t();
}

function connectFailed(e: Error): void {
  if (killAt === undefined) return;
  const code = (e as { data?: { code?: string } }).data?.code;
  const key = `${e.message.replace(/\d+/g, 'N')}${code ? ` (${code})` : ''}`;
  connectErrors.set(key, (connectErrors.get(key) ?? 0) + 1);
}

function onDisconnect(m: Member): void {
  if (killAt === undefined && !m.victim) earlyDisconnects++;
  m.disconnectAt ??= t();
}

/** A connection after the first one: the time it came back (its join is timed by the caller). */
function onReconnect(m: Member): boolean {
  if (m.disconnectAt === undefined || m.connectAt !== undefined) return false;
  m.connectAt = t();
  return true;
}

function onPush(m: Member, mark: unknown): void {
  if (typeof mark !== 'number') return;
  if (m.received.has(mark)) m.duplicates++;
  else m.received.set(mark, t());
}

function productConn(m: Member, cred: string): Conn {
  const hub = new HubClient({
    url: urlOf(m.node),
    token: () => cred,
    refreshEveryMs: 0,
    ackTimeoutMs: p.ackTimeoutMs,
    socket: { transports: ['websocket'] },
  });
  hub.socket.io.on('reconnect_attempt', () => rotate(m, hub.socket.io));
  hub.socket.io.on('open', () => opened(m));
  hub.socket.on('connect_error', (e) => connectFailed(e));
  hub.socket.on('disconnect', () => onDisconnect(m));
  // The client's own 'connect' listener (registered first) has started joining its meetings again.
  hub.socket.on('connect', () => {
    if (!onReconnect(m)) return;
    const start = m.connectAt!;
    void hub.whenRejoined().then((errors) => {
      if (errors.length) {
        failed(`joinEvent again: ${errors[0]!.message}`);
        return;
      }
      m.rejoinAt = t();
      calls.push({ start, ms: m.rejoinAt - start, failover: p.groups[m.group]!.failover });
    });
  });
  hub.on('pushStreams', () => {
    if (m.connectAt !== undefined) m.flowingAt ??= t();
  });
  hub.on('resyncRequired', () => m.resyncs++);
  hub.on('meetingEvent', (e) => {
    const data = e.data as { action?: string; payload?: { m?: unknown } } | undefined;
    if (e.type !== 'notify' || data?.action !== 'storm') return;
    if (typeof data.payload?.m === 'number' && typeof e.seq === 'number') seqOf.set(data.payload.m, e.seq);
    onPush(m, data.payload?.m);
  });
  const eventId = (g: number) => p.groups[g]!.id;
  return {
    connect: async () => void (await hub.connect()),
    async call(kind, g, mark) {
      if (kind === 'open') await hub.call('initEvent', { eventId: eventId(g) });
      else if (kind === 'join') await hub.call('joinEvent', { eventId: eventId(g) });
      else if (kind === 'details') await hub.call('getMeetingDetails', { eventId: eventId(g) });
      else await hub.call('notify', 'storm', { eventId: eventId(g), data: { m: mark } });
    },
    connected: () => hub.socket.connected,
    close: () => hub.close(),
  };
}

function bareConn(m: Member, cred: string): Conn {
  const socket: Socket = io(urlOf(m.node), {
    path: p.path,
    transports: ['websocket'],
    forceNew: true,
    autoConnect: false,
    auth: { name: cred },
  });
  const ack = async (...args: unknown[]) => {
    const r = (await socket.timeout(p.ackTimeoutMs).emitWithAck(...(args as [string]))) as { ok?: boolean };
    if (r?.ok === false) throw new Error(`${String(args[0])} refused: ${JSON.stringify(r)}`);
  };
  const room = (g: number) => p.groups[g]!.id;
  socket.io.on('reconnect_attempt', () => rotate(m, socket.io));
  socket.io.on('open', () => opened(m));
  socket.on('connect_error', (e) => connectFailed(e));
  socket.on('disconnect', () => onDisconnect(m));
  // Nothing is kept for it across connections: join the room again, as the SDK joins its meetings.
  socket.on('connect', () => {
    if (!onReconnect(m)) return;
    void timed('join', m.group, () => ack('join', room(m.group))).then((ok) => {
      if (ok) m.rejoinAt = m.flowingAt = t();
    });
  });
  socket.on('meetingEvent', (e: { m?: unknown }) => onPush(m, e?.m));
  return {
    connect: () =>
      new Promise((resolve, reject) => {
        const ok = () => {
          socket.off('connect_error', bad);
          resolve();
        };
        const bad = (e: Error) => {
          socket.off('connect', ok);
          socket.disconnect();
          reject(new Error(`connect to ${urlOf(m.node)}: ${e.message}`));
        };
        socket.once('connect', ok);
        socket.once('connect_error', bad);
        socket.connect();
      }),
    async call(kind, g, mark) {
      if (kind === 'open' || kind === 'join') await ack('join', room(g));
      else if (kind === 'details') await ack('details', room(g));
      else await ack('notify', room(g), { m: mark });
    },
    connected: () => socket.connected,
    close: () => void socket.disconnect(),
  };
}

const connOf = (m: Member, cred: string): Conn => (p.mode === 'product' ? productConn(m, cred) : bareConn(m, cred));

/** Runs `task` over `items` with at most `parallel` in flight. */
async function pool<T>(items: T[], parallel: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

let pushing = true;
const pending = new Set<Promise<unknown>>();

function track(promise: Promise<unknown>): void {
  pending.add(promise);
  void promise.finally(() => pending.delete(promise));
}

/** Each meeting gets a notify every pushEveryMs, the meetings' schedules spread over the interval. */
function pushLoop(hostConn: Conn, g: number): void {
  const send = () => {
    if (!pushing) return;
    const mark = marks.length;
    const entry: Mark = { group: g, sentAt: t() };
    marks.push(entry);
    track(
      timed('notify', g, () => hostConn.call('notify', g, mark)).then((ok) => {
        if (ok) entry.ackAt = t();
      }),
    );
    setTimeout(send, p.pushEveryMs);
  };
  setTimeout(send, Math.floor((g / p.groups.length) * p.pushEveryMs));
}

/** Reads at `probesPerS` from random connected members (a disconnected socket would queue the call). */
async function probeLoop(): Promise<void> {
  if (p.probesPerS <= 0) return;
  const t0 = t();
  let k = 0;
  while (pushing) {
    const owed = Math.floor(((t() - t0) * p.probesPerS) / 1000);
    for (; k < owed; k++) {
      for (let tries = 0; tries < 8; tries++) {
        const m = members[Math.floor(Math.random() * members.length)]!;
        if (!m.conn?.connected()) continue;
        track(timed('details', m.group, () => m.conn!.call('details', m.group)));
        break;
      }
    }
    await sleep(10);
  }
}

/**
 * A set-up call (not measured): a node too busy to answer in time (an actor's `timeout`, or `not_owner`
 * from a shard its node gave up meanwhile) is asked again a second later, up to five times in all;
 * opening and joining a meeting are idempotent for a member.
 */
async function setUp(call: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= 5 || !['timeout', 'not_owner'].includes((e as { code?: string }).code ?? '')) throw e;
      process.stderr.write(`set-up call asked again after: ${(e as Error).message}\n`);
      await sleep(1000);
    }
  }
}

async function main(): Promise<void> {
  const hostMember: Member = {
    global: -1,
    group: 0,
    node: p.host.node,
    victim: false,
    received: new Map(),
    duplicates: 0,
    resyncs: 0,
  };
  const hostConn = connOf(hostMember, p.host.cred);
  await hostConn.connect();
  // The host opens each meeting (the product's initEvent is the organizer's join).
  for (let g = 0; g < p.groups.length; g++) await setUp(() => hostConn.call('open', g));
  const t0 = t();
  await pool(members, p.parallel, async (m) => {
    m.conn = connOf(m, p.clients[m.global - p.firstIndex]!.cred);
    await m.conn.connect();
  });
  const t1 = t();
  await pool(members, p.parallel, (m) => setUp(() => m.conn!.call('join', m.group)));
  tell('ready', { clients: members.length, victims: victims.length, connectMs: t1 - t0, joinMs: t() - t1 });
  await waitFor('start');
  for (let g = 0; g < p.groups.length; g++) pushLoop(hostConn, g);
  const probes = probeLoop();
  killAt = Number((await waitFor('killed')).at);
  const stormUntil = killAt + p.stormMaxMs;
  while (t() < stormUntil && !victims.every(isRejoined)) await sleep(20);
  stormEnd = t();
  await sleep(p.tailMs);
  pushing = false;
  await probes;
  await Promise.allSettled([...pending]);
  // Deliveries still due: each meeting gets a closing push. A member's pushes arrive in the order they
  // were sent (one publisher per meeting; the SDK orders by position and holds what follows a gap), so
  // once it has its meeting's closing push, a push it lacks will not come. Waited for at most settleMs.
  const finals = await Promise.all(
    p.groups.map(async (_, g) => {
      const mark = marks.length;
      const entry: Mark = { group: g, sentAt: t(), last: true };
      marks.push(entry);
      if (await timed('notify', g, () => hostConn.call('notify', g, mark))) entry.ackAt = t();
      return mark;
    }),
  );
  const settleUntil = t() + p.settleMs;
  const closed = () => members.every((m) => m.received.has(finals[m.group]!));
  while (t() < settleUntil && !closed()) await sleep(50);
  unclosed = members.filter((m) => !m.received.has(finals[m.group]!)).length;
  logMisses();
  logTimeline();
  finish(report());
  for (const m of members) m.conn?.close();
  hostConn.close();
}

/** The first missed deliveries, with their timing, into the generator's log (the harness keeps it). */
function logMisses(): void {
  const rel = (x: number | undefined) => (x === undefined ? '-' : String(x - killAt!));
  let shown = 0;
  for (let i = 0; i < marks.length && shown < 30; i++) {
    const mk = marks[i]!;
    if (mk.ackAt === undefined || mk.last) continue;
    for (const m of byGroup[mk.group]!) {
      if (m.received.has(i) || shown++ >= 30) continue;
      process.stderr.write(
        `missed push ${i} (meeting ${p.groups[mk.group]!.id}${p.groups[mk.group]!.failover ? ', actor on the victim' : ''}; sent ${rel(mk.sentAt)}, acked ${rel(mk.ackAt)} ms after the kill) at client ${m.global} (node ${m.node}${m.victim ? ', victim' : ''}; disconnected ${rel(m.disconnectAt)}, connected ${rel(m.connectAt)}, pushes flowing ${rel(m.flowingAt)}, joined ${rel(m.rejoinAt)}; received ${[
          ...m.received.keys(),
        ]
          .filter((k) => marks[k]!.group === mk.group)
          .map((k) => (seqOf.has(k) ? `${k} (meeting seq ${seqOf.get(k)})` : k))
          .join(', ')})\n`,
      );
    }
  }
}

/** Where the victims' time went (into the generator's log): each step's spread, attempts, failed attempts. */
function logTimeline(): void {
  const spread = (xs: number[]) => {
    const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
    const at = (q: number) => s[Math.min(s.length - 1, Math.floor((q / 100) * s.length))];
    return s.length ? `p50 ${at(50)} p90 ${at(90)} p99 ${at(99)} max ${s[s.length - 1]} (n ${s.length})` : 'none';
  };
  const v = victims;
  const attempts = new Map<number, number>();
  for (const m of v) attempts.set(m.attempts ?? 0, (attempts.get(m.attempts ?? 0) ?? 0) + 1);
  process.stderr.write(
    [
      `timeline of ${v.length} victims (ms; steps from the kill, or from the previous step):`,
      `  disconnected: ${spread(v.map((m) => (m.disconnectAt ?? NaN) - killAt!))}`,
      `  attempt began: ${spread(v.map((m) => (m.attemptAt ?? NaN) - killAt!))}`,
      `  transport open, after the attempt began: ${spread(v.map((m) => (m.openAt ?? NaN) - (m.attemptAt ?? NaN)))}`,
      `  connected (handshake answered), after the transport opened: ${spread(v.map((m) => (m.connectAt ?? NaN) - (m.openAt ?? NaN)))}`,
      `  connected again: ${spread(v.map((m) => (m.connectAt ?? NaN) - killAt!))}`,
      `  pushes flowing, after connected: ${spread(v.map((m) => (m.flowingAt ?? NaN) - (m.connectAt ?? NaN)))}`,
      `  joined, after connected: ${spread(v.map((m) => (m.rejoinAt ?? NaN) - (m.connectAt ?? NaN)))}`,
      `  reconnection attempts: ${[...attempts]
        .sort((a, b) => a[0] - b[0])
        .map(([k, c]) => `${k} x${c}`)
        .join(', ')}`,
      `  failed attempts: ${[...connectErrors].map(([k, c]) => `${c} x ${k}`).join('; ') || 'none'}`,
    ].join('\n') + '\n',
  );
}

function report(): Record<string, unknown> {
  return {
    clients: members.length,
    earlyDisconnects,
    stormMs: (stormEnd ?? killAt!) - killAt!,
    unclosed,
    ...account({ members, marks, calls, killAt: killAt!, stormEnd: stormEnd ?? killAt! }),
    failedCalls,
    failures: Object.fromEntries([...failures].sort((a, b) => b[1] - a[1]).slice(0, 5)),
  };
}

main().catch((e) => finish({ error: String(e?.stack ?? e) }));
