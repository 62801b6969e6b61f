import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChainVerifier, GENESIS_HASH } from '../../../src/data/audit-chain.js';
import { CONTRACT_SIDES, type ContractSide } from '../../support/fakes/contract.js';

/** The audit trail contract (src/data/repositories/audit.repository.ts) on the in-memory fake and the real repository. */
describe.each(CONTRACT_SIDES)('the audit trail on %s', (_name, open) => {
  let side: ContractSide;
  const T = 'audit';
  const r = () => side.repos(T).audits;

  beforeAll(async () => {
    side = await open();
    await side.provision(T);
  });
  afterAll(async () => side.close());

  it('appends a chain that verifies: positions without gaps, each linked to the one before', async () => {
    expect(await r().head()).toBeNull();
    const a = await r().append({
      action: 'signin.success',
      outcome: 'success',
      subjectId: 'u1',
      details: { method: 'pin' },
    });
    const b = await r().append({ action: 'pin.set', outcome: 'success', actorId: 'u1', subjectId: 'u1' });
    const c = await r().append({ action: 'signin.failure', outcome: 'failure', subjectId: 'u2', ip: '192.0.2.1' });
    expect([a.seq, b.seq, c.seq]).toEqual([1, 2, 3]);
    expect([a.prev, b.prev, c.prev]).toEqual([GENESIS_HASH, a.hash, b.hash]);
    const v = new ChainVerifier(T);
    for (const e of await r().range(0, 10)) expect(v.push(e)).toBe(true);
    expect(v.checked).toBe(3);
    expect(await r().head()).toEqual(c);
    expect(await r().at(2)).toEqual(b);
    expect(await r().at(9)).toBeNull();
    expect((await r().range(1, 1)).map((e) => e.seq)).toEqual([2]);
  });

  it('lists newest first by action, subject and position, without absent fields', async () => {
    expect((await r().list({ subjectId: 'u1' })).map((e) => e.action)).toEqual(['pin.set', 'signin.success']);
    expect((await r().list({ action: 'signin.failure' }))[0]).toMatchObject({ ip: '192.0.2.1', outcome: 'failure' });
    expect((await r().list({ beforeSeq: 3 }, 1)).map((e) => e.seq)).toEqual([2]);
    expect(await r().list({ action: 'signin.failure' })).not.toContainEqual(
      expect.objectContaining({ actorId: expect.anything() }),
    );
    expect(Object.keys((await r().at(3))!).sort()).toEqual(
      ['action', 'createdAt', 'hash', 'id', 'ip', 'outcome', 'prev', 'seq', 'subjectId'].sort(),
    );
  });

  it('keeps checkpoints by position, replacing one at the same position', async () => {
    const cp = {
      seq: 2,
      hash: 'h2',
      createdAt: new Date('2026-11-01T00:00:00Z'),
      kid: 'k',
      jws: 'j',
      jwk: { kty: 'EC' },
    };
    await r().putCheckpoint(cp);
    await r().putCheckpoint({ ...cp, jws: 'j2' });
    await r().putCheckpoint({ ...cp, seq: 3, hash: 'h3' });
    expect(await r().checkpointAt(2)).toEqual({ ...cp, jws: 'j2' });
    expect((await r().checkpointsAfter(2, 10)).map((c) => c.seq)).toEqual([3]);
    expect((await r().checkpoints(10)).map((c) => c.seq)).toEqual([3, 2]);
    expect(await r().checkpointAt(7)).toBeNull();
  });
});
