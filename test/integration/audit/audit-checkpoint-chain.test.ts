import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import canonicalize from 'canonicalize';
import { CompactSign, type JWK } from 'jose';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { verifyExport } from '../../../src/data/audit-export-verifier.js';
import { AuditCheckpointer } from '../../../src/core/audit/audit-checkpointer.js';
import { CHECKPOINT_MAX_ENTRIES, readStatement, type CheckpointStatement } from '../../../src/data/audit-checkpoint.js';

type Line = Record<string, unknown> & { type: string };

/**
 * Checkpoints as a linked sequence (decision 1020): a backlog longer than one checkpoint is signed as
 * several in a row, each following the one before; a trail carried over from version 1 checkpoints
 * (a head alone) continues from them; two nodes signing at once do not fork the sequence.
 */
describe('audit trail: linked checkpoints', () => {
  const env = testEnv();
  const nodes: TestNode[] = [];
  let trusted: JWK[];
  const exported = async (tenant: string) => {
    const lines: string[] = [];
    for await (const l of nodes[0]!.services.auth.audit.exportLines(tenant)) lines.push(JSON.stringify(l));
    return lines;
  };
  const record = async (tenant: string, count: number, node = nodes[0]!) => {
    for (let i = 0; i < count; i++)
      await node.services.auth.audit.record(tenant, { action: 'test.step', outcome: 'success', details: { i } });
  };

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

  it('signs a backlog longer than one checkpoint as linked checkpoints; a removed one is named', async () => {
    const tenant = 'cpbacklog';
    await nodes[0]!.services.tenants.create({ name: tenant, displayName: 'Backlog Clinic' });
    await record(tenant, CHECKPOINT_MAX_ENTRIES + 20);
    const audit = nodes[0]!.services.auth.audit;
    const head = (await audit.verifyLinks(tenant)).head.seq;
    expect(head).toBeGreaterThan(CHECKPOINT_MAX_ENTRIES + 20);
    expect(await audit.verify(tenant)).toMatchObject({ ok: true, verified: head, covered: head, checkpoints: 2 });
    const [second, first] = await audit.checkpoints(tenant, 10);
    const a = readStatement<CheckpointStatement>(first!.jws);
    const b = readStatement<CheckpointStatement>(second!.jws);
    expect(a.statement).toMatchObject({ v: 2, from: 0, seq: CHECKPOINT_MAX_ENTRIES });
    expect(a.statement.entries).toHaveLength(CHECKPOINT_MAX_ENTRIES);
    expect(b.statement).toMatchObject({ from: CHECKPOINT_MAX_ENTRIES, prev: a.digest, seq: head });

    const lines = await exported(tenant);
    expect(await verifyExport(lines, trusted)).toMatchObject({ ok: true, covered: head });
    // The first checkpoint line removed from the export: the second no longer follows anything.
    const without = lines.filter(
      (l) => !(l.includes('"type":"checkpoint"') && l.includes(`"seq":${a.statement.seq},`)),
    );
    expect(without).toHaveLength(lines.length - 1);
    const r = await verifyExport(without, trusted);
    expect(r).toMatchObject({ ok: false, firstBroken: { seq: 1, reason: 'checkpoint_invalid' } });
    expect(r.message).toMatch(
      new RegExp(`^checkpoint ${head} does not verify \\(it follows checkpoint ${a.statement.seq}`),
    );

    // The same in the collection: the online verify names it too.
    await nodes[0]!.infra.mongo
      .tenantDb(tenant)
      .models.AuditCheckpoint.collection.deleteOne({ _id: a.statement.seq } as never);
    expect(await audit.verify(tenant)).toMatchObject({
      ok: false,
      firstBroken: { seq: 1, reason: 'checkpoint_invalid' },
    });
  });

  it('continues from a version 1 checkpoint (a head alone) and still names an edit before it', async () => {
    const tenant = 'cplegacy';
    const services = nodes[0]!.services;
    await services.tenants.create({ name: tenant, displayName: 'Legacy Clinic' });
    await record(tenant, 9);
    // A checkpoint as decision 881 signed it, stored before any version 2 one.
    const head = (await services.auth.audit.verifyLinks(tenant)).head;
    const key = await services.auth.signingKeys.current();
    const jwk = trusted.find((k) => k.kid === key.kid)!;
    const createdAt = new Date();
    const payload = canonicalize({
      typ: 'audit-checkpoint',
      v: 1,
      tenant,
      seq: head.seq,
      hash: head.hash,
      createdAt: createdAt.toISOString(),
    }) as string;
    const jws = await new CompactSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'audit-checkpoint+jws' })
      .sign(key.key);
    await nodes[0]!.infra.mongo.tenantDb(tenant).models.AuditCheckpoint.collection.insertOne({
      _id: head.seq,
      hash: head.hash,
      createdAt,
      kid: key.kid,
      jws,
      jwk,
    } as never);

    await record(tenant, 5);
    const audit = services.auth.audit;
    expect(await audit.verify(tenant)).toMatchObject({ ok: true, verified: head.seq + 5, covered: head.seq + 5 });
    const [latest] = await audit.checkpoints(tenant, 1);
    expect(readStatement<CheckpointStatement>(latest!.jws).statement).toMatchObject({
      v: 2,
      from: head.seq,
      prev: readStatement(jws).digest,
    });
    const lines = await exported(tenant);
    expect(await verifyExport(lines, trusted)).toMatchObject({ ok: true, covered: head.seq + 5 });

    // An entry before the version 1 checkpoint edited in the export: its head no longer matches.
    const edited = lines.map((l) => {
      const e = JSON.parse(l) as Line;
      return e.type === 'entry' && e.seq === 4 ? JSON.stringify({ ...e, outcome: 'failure' }) : l;
    });
    expect(await verifyExport(edited, trusted)).toMatchObject({
      ok: false,
      firstBroken: { seq: 4, reason: 'hash_mismatch' },
    });
  });

  it('two nodes signing the same trail at once leave one linked sequence', async () => {
    const tenant = 'cprace';
    await nodes[0]!.services.tenants.create({ name: tenant, displayName: 'Race Clinic' });
    for (let round = 0; round < 3; round++) {
      await record(tenant, 4, nodes[round % 2]!);
      const signed = await Promise.all([
        nodes[0]!.services.auth.audit.checkpoint(tenant),
        nodes[1]!.services.auth.audit.checkpoint(tenant),
        nodes[0]!.services.auth.audit.checkpoint(tenant),
        nodes[1]!.services.auth.audit.checkpoint(tenant),
      ]);
      const head = (await nodes[0]!.services.auth.audit.verifyLinks(tenant)).head;
      for (const c of signed) expect(c).toMatchObject({ seq: head.seq, hash: head.hash });
      expect(new Set(signed.map((c) => c!.jws)).size).toBe(1);
    }
    const { seq } = (await nodes[1]!.services.auth.audit.verifyLinks(tenant)).head;
    const report = await nodes[1]!.services.auth.audit.verify(tenant);
    expect(report).toMatchObject({ ok: true, covered: seq, checkpoints: 3 });
    expect(await verifyExport(await exported(tenant), trusted)).toMatchObject({ ok: true, covered: seq });
  });

  it('a periodic pass signs a tenant only when it has new entries', async () => {
    const tenant = 'cpidle';
    const node = nodes[0]!;
    await node.services.tenants.create({ name: tenant, displayName: 'Idle Clinic' });
    const pass = new AuditCheckpointer({
      audit: node.services.auth.audit,
      tenants: async () => [tenant],
      claimTurn: async () => true,
      intervalMs: 60_000,
      logger: node.infra.logger,
    });
    const count = () => node.infra.mongo.tenantDb(tenant).models.AuditCheckpoint.collection.countDocuments();
    expect(await pass.tick()).toEqual({ signed: 1, failed: [] });
    expect(await count()).toBe(1);
    expect(await pass.tick()).toEqual({ signed: 0, failed: [] });
    expect(await count()).toBe(1);
    await record(tenant, 2);
    expect(await pass.tick()).toEqual({ signed: 1, failed: [] });
    expect(await count()).toBe(2);
  });
});
