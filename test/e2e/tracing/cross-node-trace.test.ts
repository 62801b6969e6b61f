import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { connect, must, recorder, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { startOtlpCollector, type CollectedSpan } from '../../support/otlp-collector.js';
import { waitForMembers } from '../../support/actor-kit.js';
import { client } from '../../support/http.js';
import { newEvent } from '../../support/events.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';
import { TelemetryClient, conferenceScript } from '../../../src/vcs/telemetry.client.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * One trace across processes (decision 840): a hub call on a hub-only node asks a meeting actor that
 * lives on an actors-only node, whose turn enqueues a recording job that a workers-only node runs, and
 * whose push reaches the hub node through the Redis relay; and a gRPC telemetry call on the actors node
 * (which also runs the ingest) enqueues the completion job the worker runs, which asks the event's
 * meeting actor back on the actors node (decision 1090), whose push reaches the hub node the same way. Every node exports OTLP/HTTP to a receiver in
 * this process; the spans must form one tree under the caller's traceparent.
 */
describe('tracing across nodes', () => {
  const id = uniqueId();
  const shared = {
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: '8',
  };
  const ids = { hub: `trace-hub-${id}`, actors: `trace-actors-${id}`, workers: `trace-workers-${id}` };
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;
  let setup: TestNode;
  const children: ChildNode[] = [];
  let hubNode: ChildNode;
  const open: HubClient[] = [];
  let alice: string;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    setup = await startTestNode({ ...shared, ROLES: 'http,hub' });
    alice = await createUser(setup, 'acme', { username: 'alice', role: 'clinician' });
    const traced = (roles: string, nodeId: string) =>
      spawnChildNode(
        testEnv({
          ...shared,
          ROLES: roles,
          NODE_ID: nodeId,
          LOG_LEVEL: 'warn',
          // The test's clients are on loopback: their traceparent counts as a configured proxy's (decision 1033).
          TRUST_PROXY: 'loopback',
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          TRACING_EXPORT_DELAY_MS: '100',
        }),
        60_000,
      );
    children.push(...(await Promise.all([traced('http,hub', ids.hub), traced('actors,telemetry', ids.actors)])));
    children.push(await traced('workers', ids.workers));
    hubNode = children[0]!;
    await waitForMembers((setup.roles.get('hub') as HubRoleHandle).actors, [ids.actors]);
  }, 180_000);

  afterAll(async () => {
    for (const s of open) s.close();
    for (const c of children.reverse()) await c.stop();
    await setup?.destroy();
    await collector?.close();
  });

  it('continues a REST caller traceparent, and its correlation id is the trace id', async () => {
    const traceId = hex(16);
    const parent = hex(8);
    const r = await client(hubNode.url).get('/api/tenant/ping', {
      tenant: 'acme',
      headers: { traceparent: `00-${traceId}-${parent}-01` },
    });
    expect(r.headers['x-correlation-id']).toBe(traceId);
    const [span] = (await collector.until((all) => all.some((s) => s.traceId === traceId))).filter(
      (s) => s.traceId === traceId,
    );
    expect(span).toMatchObject({ parentSpanId: parent, node: ids.hub, kind: 2 });
    expect(span!.attributes['http.route']).toBe('/api/tenant/ping');
  });

  it('one trace spans a hub call, the actor turn on another node, the job on the worker and the push back', async () => {
    const token = await tokenFor(setup, 'acme', 'alice');
    const host = await setup.services.auth.verifyAccessToken('acme', token);
    const now = Date.now();
    const event = await setup.services.events.create(host, {
      name: 'Traced consultation',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [],
      attachments: [],
    });
    const eventId = String(event._id);
    const socket = await connect(hubNode.url, 'acme', { token });
    open.push(socket);
    const pushes = recorder(socket);
    await must(socket, 'initEvent', { eventId });

    const traceId = hex(16);
    const root = hex(8);
    await must(socket, 'startRecording', { eventId }, { traceparent: `00-${traceId}-${root}-01` });
    expect(await pushes.next('meetingEvent', (e) => e.type === 'recordingStarted')).toMatchObject({ by: alice });

    const named = (all: CollectedSpan[], name: string) => all.find((s) => s.traceId === traceId && s.name === name);
    // Awaited by what must have been exported whatever the trace ids (the one recording job, one delivery
    // span per push the socket got), so a broken propagation fails on the tree below, not on a timeout.
    const received = pushes.of('meetingEvent').length;
    const spans = await collector.until(
      (all) =>
        !!named(all, 'hub startRecording') &&
        all.some((s) => s.name === 'job run recording') &&
        all.filter((s) => s.name === 'hub push meetingEvent').length >= received,
      30_000,
    );
    // Each node exports its spans in batches of its own: a turn's span can leave after its job's enqueue
    // span and after the spans awaited above. The chains below are read once every span on them is in,
    // parent by parent whatever the trace ids, or after 5 s, so a broken propagation still fails on them.
    const reached = (all: CollectedSpan[], s: CollectedSpan | undefined): boolean => {
      const bySpan = new Map(all.map((x) => [x.spanId, x]));
      for (let n = 0; s && n < 20; n++) {
        if (!s.parentSpanId || s.parentSpanId === root) return true;
        s = bySpan.get(s.parentSpanId);
      }
      return false;
    };
    await collector
      .until(
        (all) =>
          reached(
            all,
            all.find((s) => s.name === 'job run recording'),
          ) && reached(all, named(all, 'hub push meetingEvent')),
        5_000,
      )
      .catch(() => undefined);
    const mine = spans.filter((s) => s.traceId === traceId);
    const byId = new Map(mine.map((s) => [s.spanId, s]));
    const parentOf = (s: CollectedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    /** The chain of span names from `s` up to the caller's root span. */
    const chain = (s: CollectedSpan): string[] => {
      const up = parentOf(s);
      return [
        `${s.node === ids.hub ? 'hub' : s.node === ids.actors ? 'actors' : 'workers'}:${s.name}`,
        ...(up ? chain(up) : []),
      ];
    };

    const call = named(spans, 'hub startRecording')!;
    expect(call).toMatchObject({ node: ids.hub, parentSpanId: root });
    const job = spans.find((s) => s.name === 'job run recording')!;
    expect(chain(job)).toEqual([
      'workers:job run recording',
      'actors:job enqueue recording',
      'actors:actor turn meeting',
      'actors:actor serve meeting',
      'hub:actor ask meeting',
      'hub:hub startRecording',
    ]);
    // The turn's push travels back through the Redis relay to the hub node's sockets.
    expect(named(spans, 'hub push meetingEvent') && chain(named(spans, 'hub push meetingEvent')!)).toEqual([
      'hub:hub push meetingEvent',
      'actors:push meetingEvent',
      'actors:actor turn meeting',
      'actors:actor serve meeting',
      'hub:actor ask meeting',
      'hub:hub startRecording',
    ]);
    expect(new Set(mine.map((s) => s.node))).toEqual(new Set(Object.values(ids)));
    expect(job.attributes).toMatchObject({ tenant: 'acme', 'job.name': 'recording' });
  });

  it('one trace spans a gRPC telemetry call, the completion job on the worker, its meeting actor turn and the push to the hub node', async () => {
    const ingest = children[1]!.logs.find((l) => l.msg === 'telemetry ingest listening');
    expect(ingest).toBeDefined();
    const key = await setup.services.telemetry.issueKey('acme');
    const event = await newEvent(setup, 'acme');
    const eventId = event._id.toHexString();
    const conferenceId = `conf-${eventId}`;
    const jobId = `completion.acme.${eventId}.${conferenceId}`;
    const telemetry = new TelemetryClient(`127.0.0.1:${String(ingest!.port)}`, 'acme', key);
    const traceId = hex(16);
    const root = hex(8);
    try {
      const ack = await telemetry.sendBatch(
        conferenceScript({ conferenceId, eventId, participants: [{ key: 'device:1', name: 'Headset' }] }),
        { traceparent: `00-${traceId}-${root}-01` },
      );
      expect(ack.completionsEnqueued).toEqual([conferenceId]);
    } finally {
      telemetry.close();
    }
    expect((await setup.services.jobs.waitUntilFinished('telemetry-completion', jobId)).state).toBe('completed');

    // Awaited by the job's own spans whatever their trace (the run, its ask of the meeting actor, the turn's
    // relayed push and the hub node's delivery of it), so a broken propagation fails on the tree below, not
    // on a timeout.
    const runOf = (all: CollectedSpan[]) =>
      all.find((s) => s.name === 'job run telemetry-completion' && s.attributes['job.id'] === jobId);
    const childOf = (all: CollectedSpan[], parent: CollectedSpan | undefined, name: string) =>
      parent && all.find((s) => s.name === name && s.parentSpanId === parent.spanId && s.traceId === parent.traceId);
    const down = ['actor ask meeting', 'actor serve meeting', 'actor turn meeting', 'push meetingEvent'];
    const pushOf = (all: CollectedSpan[]) =>
      childOf(
        all,
        down.reduce((at: CollectedSpan | undefined, name) => childOf(all, at, name), runOf(all)),
        'hub push meetingEvent',
      );
    const spans = await collector.until((all) => !!pushOf(all), 30_000);
    const mine = spans.filter((s) => s.traceId === traceId);
    const byId = new Map(mine.map((s) => [s.spanId, s]));
    const chain = (s: CollectedSpan): string[] => {
      const up = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
      return [
        `${s.node === ids.hub ? 'hub' : s.node === ids.actors ? 'actors' : 'workers'}:${s.name}`,
        ...(up ? chain(up) : []),
      ];
    };
    const call = mine.find((s) => s.name === 'grpc SendTelemetryBatch');
    expect(call).toMatchObject({ node: ids.actors, parentSpanId: root, kind: 2 });
    expect(call!.attributes).toMatchObject({ tenant: 'acme', 'rpc.method': 'SendTelemetryBatch' });
    const run = runOf(spans)!;
    expect(run.traceId).toBe(traceId);
    expect(chain(run)).toEqual([
      'workers:job run telemetry-completion',
      'actors:job enqueue telemetry-completion',
      'actors:grpc SendTelemetryBatch',
    ]);
    expect(chain(pushOf(spans)!)).toEqual([
      'hub:hub push meetingEvent',
      'actors:push meetingEvent',
      'actors:actor turn meeting',
      'actors:actor serve meeting',
      'workers:actor ask meeting',
      'workers:job run telemetry-completion',
      'actors:job enqueue telemetry-completion',
      'actors:grpc SendTelemetryBatch',
    ]);
    expect(run.attributes).toMatchObject({ tenant: 'acme', 'job.name': 'telemetry-completion', 'job.id': jobId });
  });
});
