import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { verifyExport } from '../../../src/data/audit-export-verifier.js';
import { AppError } from '../../../src/kernel/errors.js';
import { AuditService, type AuditRecord } from '../../../src/core/audit/audit.service.js';
import { Mongo } from '../../../src/data/mongo.js';
import { AuditHeads, AuditRepository } from '../../../src/data/repositories/audit.repository.js';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';

/** What one append was answered: which node and round made it, its place in the node's calls, its entry. */
interface Ack {
  node: number;
  round: number;
  call: number;
  entry: AuditRecord;
}

/** Counts a node's inserts into the tenant's trail and the ones refused on a duplicate position (not replaced). */
function countInserts(node: TestNode, tenant: string) {
  const collection = node.infra.mongo.tenantDb(tenant).models.Audit.collection;
  const insertMany = collection.insertMany.bind(collection);
  const counts = { inserts: 0, lostPositions: 0 };
  collection.insertMany = ((...args: Parameters<typeof insertMany>) => {
    counts.inserts++;
    return insertMany(...args).catch((e: { code?: number; writeErrors?: { code?: number }[] }) => {
      if (e?.writeErrors?.some((w) => w.code === 11000) || e?.code === 11000) counts.lostPositions++;
      throw e;
    });
  }) as never;
  return counts;
}

/**
 * A node writes the audit entries its actions make while an insert of the chain is in flight together,
 * in one ordered insert (decision 1107). The chain must stay exactly what one-by-one appends make: every
 * answered entry stored once, where its answer says, in the order the appends were made, linked and
 * signed, while two nodes race for the same positions.
 */
describe('audit trail: appends written in batches', () => {
  const env = testEnv();
  const nodes: TestNode[] = [];
  let trusted: JWK[];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++)
      nodes.push(
        await startTestNode({
          MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
          MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
          REDIS_PREFIX: env.REDIS_PREFIX!,
        }),
      );
    trusted = (await nodes[0]!.services.auth.signingKeys.jwks()).keys;
  });
  afterAll(async () => {
    for (const n of nodes) await n.destroy();
  });

  it('keeps one chain while two nodes append many entries at once: each answered entry stored once, where and in the order answered; it verifies, signed and exported', async () => {
    const tenant = 'batches';
    await nodes[0]!.services.tenants.create({ name: tenant, displayName: 'Batch Clinic' });
    const audit = nodes[0]!.services.auth.audit;
    const before = (await audit.verifyLinks(tenant)).head.seq;
    const counts = nodes.map((n) => countInserts(n, tenant));
    const ROUNDS = 6;
    const PER_NODE = 80;

    const acks: Ack[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts once every append of the round before was answered, on both nodes.
      await Promise.all(
        nodes.flatMap((n, node) =>
          Array.from({ length: PER_NODE }, (_, call) =>
            n.services.auth.audit
              .record(tenant, { action: 'meeting.join', outcome: 'success', details: { node, round, call } })
              .then((entry) => void acks.push({ node, round, call, entry })),
          ),
        ),
      );
    }
    expect(acks).toHaveLength(2 * ROUNDS * PER_NODE);

    // Every answered entry is in the chain once, at the position its answer gave, with its hash.
    const chain: AuditRecord[] = [];
    for await (const e of audit.entries(tenant)) chain.push(e);
    expect(chain.length).toBe(before + acks.length);
    const bySeq = new Map(chain.map((e) => [e.seq, e]));
    const misplaced = acks.filter(
      (a) => bySeq.get(a.entry.seq)?.id !== a.entry.id || bySeq.get(a.entry.seq)?.hash !== a.entry.hash,
    );
    expect(misplaced).toEqual([]);
    expect(new Set(acks.map((a) => a.entry.id)).size).toBe(acks.length);

    // In the order the appends were made: on each node in call order, and a round after the round before.
    for (let node = 0; node < 2; node++) {
      const seqs = acks
        .filter((a) => a.node === node)
        .sort((a, b) => a.round - b.round || a.call - b.call)
        .map((a) => a.entry.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    for (let round = 1; round < ROUNDS; round++) {
      const last = Math.max(...acks.filter((a) => a.round === round - 1).map((a) => a.entry.seq));
      const first = Math.min(...acks.filter((a) => a.round === round).map((a) => a.entry.seq));
      expect(first).toBeGreaterThan(last);
    }

    // The nodes raced: from the second round on, the node whose last entry is not the head starts from a
    // stale head and loses a position at least once. And the entries went in batches, not one by one.
    expect(counts[0]!.lostPositions + counts[1]!.lostPositions).toBeGreaterThanOrEqual(ROUNDS - 1);
    expect(counts[0]!.inserts + counts[1]!.inserts).toBeLessThan(acks.length);

    // The audit's own verifications: links, signed checkpoints, and an auditor's offline copy.
    const head = before + acks.length;
    expect(await audit.verifyLinks(tenant)).toMatchObject({ ok: true, verified: head });
    expect(await audit.verify(tenant)).toMatchObject({ ok: true, verified: head, covered: head });
    const lines: string[] = [];
    for await (const l of audit.exportLines(tenant)) lines.push(JSON.stringify(l));
    expect(await verifyExport(lines, trusted)).toMatchObject({ ok: true, verified: head, covered: head });
  }, 300_000);

  it('fails an entry the database refuses alone, with a coded error, and stores the others of its batch', async () => {
    const tenant = 'refused';
    await nodes[0]!.services.tenants.create({ name: tenant, displayName: 'Refusing Clinic' });
    const audit = nodes[0]!.services.auth.audit;
    const before = (await audit.verifyLinks(tenant)).head.seq;
    const step = (i: number, details: Record<string, unknown> = {}) =>
      audit.record(tenant, { action: 'test.step', outcome: 'success', details: { i, ...details } });
    // The first append goes alone; the next five wait for it and go together. Two of them are larger than
    // a document may be, which fails the whole insert without naming the document (the driver refuses a
    // document just over the limit, and its encoder overflows on a larger one).
    const MB = 1024 * 1024;
    const settled = await Promise.allSettled([
      step(0),
      step(1),
      step(2, { blob: 'x'.repeat(17 * MB) }),
      step(3),
      step(4, { blob: 'x'.repeat(16.5 * MB) }),
      step(5),
    ]);
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    for (const k of [2, 4]) {
      const refused = (settled[k] as PromiseRejectedResult).reason as AppError;
      expect(refused).toBeInstanceOf(AppError);
      expect(refused.code).toBe('internal');
    }
    const stored = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4].map((k) => before + k));
    expect(stored.map((e) => e.details!.i)).toEqual([0, 1, 3, 5]);
    expect(await audit.verifyLinks(tenant)).toMatchObject({ ok: true, verified: before + 4 });
  }, 120_000);
});

/**
 * The embedded default killed (SIGKILL) while batches are in flight: every append answered before is in
 * the chain after the restart, the chain verifies, and every other append was answered with a coded
 * error (its entry may be stored unanswered, never answered unstored).
 */
describe('audit trail: batches through a crash of the embedded default', () => {
  let server: DedicatedService;
  // A JVM boots slowly on a loaded machine: a beforeAll cut short would leave the server starting.
  beforeAll(async () => {
    server = await dedicatedMongoJavaServer('h2');
  }, 180_000);
  afterAll(async () => server?.destroy());

  const open = async () => {
    const mongo = await Mongo.connect({
      uri: server.url,
      catalogDb: 'gc_catalog',
      tenantDbPrefix: 'gc_',
      timeoutMs: 5000,
    });
    const heads = new AuditHeads();
    return { mongo, audit: new AuditService({ audits: (t) => new AuditRepository(mongo.tenantDb(t), heads) }) };
  };

  it('keeps every answered entry and answers the others with a coded error', async () => {
    const tenant = 'crash';
    const LANES = 30;
    const KILL_AFTER = 300;
    const { mongo, audit } = await open();
    const answered: AuditRecord[] = [];
    const refused: unknown[] = [];
    const attempted = new Set<string>();
    let killed: Promise<void> | undefined;
    let dead = false;
    let late = 0;
    // Lanes that append one entry after another, as joins do, so a batch is always in flight; the server
    // is killed as soon as KILL_AFTER entries were answered. A lane stops at its first refusal, or at an
    // answer that arrives once the server is gone (a reply already on its way when it was killed).
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let n = 0; ; n++) {
          const key = `${lane}:${n}`;
          attempted.add(key);
          try {
            answered.push(await audit.record(tenant, { action: 'meeting.join', outcome: 'success', details: { key } }));
          } catch (e) {
            refused.push(e);
            return;
          }
          if (dead) return void late++;
          if (answered.length >= KILL_AFTER) killed ??= server.kill().then(() => void (dead = true));
        }
      }),
    );
    await killed;
    await mongo.close();
    expect(refused.length + late).toBe(LANES);
    expect(refused.filter((e) => !(e instanceof AppError && e.code === 'service_unavailable'))).toEqual([]);

    await server.start();
    const after = await open();
    try {
      expect(await after.audit.verifyLinks(tenant)).toMatchObject({ ok: true });
      const stored = new Map<string, AuditRecord>();
      for await (const e of after.audit.entries(tenant)) stored.set(e.id, e);
      // Every answered entry survived, as answered; whatever else is stored was attempted, and is stored once.
      expect(answered.filter((a) => stored.get(a.id)?.hash !== a.hash)).toEqual([]);
      const keys = [...stored.values()].map((e) => String(e.details!.key));
      expect(keys.filter((k) => !attempted.has(k))).toEqual([]);
      expect(new Set(keys).size).toBe(keys.length);
      expect(stored.size).toBeGreaterThanOrEqual(answered.length);
      expect(stored.size).toBeLessThanOrEqual(answered.length + LANES);
    } finally {
      await after.mongo.close();
    }
  }, 300_000);
});
