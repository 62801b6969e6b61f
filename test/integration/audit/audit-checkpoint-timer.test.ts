import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { openStatement } from '../../../src/data/audit-checkpoint.js';

/**
 * The periodic checkpoint (decision 881): every workers node runs the timer, one claims each period's
 * turn and signs each tenant's head; nobody calls `checkpoint` here. Two workers nodes share the turn.
 */
describe('audit trail: periodic signed checkpoints on two workers nodes', () => {
  const env = testEnv();
  const tenant = 'auditcp';
  const nodes: TestNode[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++)
      nodes.push(
        await startTestNode({
          ROLES: 'workers',
          MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
          MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
          REDIS_PREFIX: env.REDIS_PREFIX!,
          AUDIT_CHECKPOINT_INTERVAL_SECONDS: '1',
        }),
      );
    await nodes[0]!.services.tenants.create({ name: tenant, displayName: 'Checkpoint Clinic' });
  });
  afterAll(async () => {
    for (const n of nodes) await n.destroy();
  });

  const repo = () => nodes[0]!.infra.mongo.tenantDb(tenant).models.AuditCheckpoint;
  /** Polls the stored checkpoints (a timer on another node writes them: there is no event to await). */
  async function signedAt(seq: number, deadlineMs = 60_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const [last] = await nodes[0]!.services.auth.audit.checkpoints(tenant, 1);
      if (last && last.seq >= seq) return;
      if (Date.now() > until) throw new Error(`no checkpoint reached position ${seq} within ${deadlineMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('signs each new head once, without being asked, and the signatures verify', async () => {
    const audit = nodes[1]!.services.auth.audit;
    for (let i = 0; i < 3; i++) await audit.record(tenant, { action: 'test.step', outcome: 'success', details: { i } });
    const first = (await audit.verifyLinks(tenant)).head;
    await signedAt(first.seq);
    for (let i = 3; i < 5; i++) await audit.record(tenant, { action: 'test.step', outcome: 'success', details: { i } });
    const second = (await audit.verifyLinks(tenant)).head;
    await signedAt(second.seq);

    const all = await audit.checkpoints(tenant, 100);
    const seqs = all.map((c) => c.seq);
    expect(new Set(seqs).size).toBe(seqs.length); // no head signed twice, whichever node had the turn
    expect(seqs).toContain(second.seq);
    for (const c of all) {
      const { statement } = await openStatement(c.jws, c.jwk, 'audit-checkpoint');
      expect(statement).toMatchObject({ tenant, seq: c.seq, hash: c.hash });
    }
    expect(await repo().countDocuments()).toBe(all.length);
  });
});
