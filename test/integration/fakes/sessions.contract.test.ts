import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { toAppError } from '../../../src/kernel/errors.js';
import { CONTRACT_SIDES, type ContractSide } from '../../support/fakes/contract.js';

/**
 * The sessions and offline tokens contract (src/data/repositories/session.repository.ts,
 * offline-token.repository.ts) on the in-memory fake and on the real repositories. The first case is
 * the one issue 35 §1 turned on: a session without a permission cap reads back without one.
 */
describe.each(CONTRACT_SIDES)('sessions and offline tokens on %s', (_name, open) => {
  let side: ContractSide;
  const T = 'sessions';
  const r = () => side.repos(T);
  const user = new Types.ObjectId().toHexString();
  let n = 0;
  const fresh = (over: Record<string, unknown> = {}) => ({
    _id: `sess-${++n}-${Date.now()}`,
    userId: user,
    method: 'oidc' as const,
    refreshHash: `hash-${n}-${Math.random()}`,
    expiresAt: new Date(Date.now() + 3_600_000),
    ...over,
  });

  beforeAll(async () => {
    side = await open();
    await side.provision(T);
  });
  afterAll(async () => side.close());

  it('reads a root session back without a permission cap, and a capped one with its cap, even empty', async () => {
    const root = fresh();
    await r().sessions.create(root);
    const read = await r().sessions.findById(root._id);
    expect(read).not.toHaveProperty('permissionCap');
    expect(read).toMatchObject({ _id: root._id, method: 'oidc', refreshHash: root.refreshHash, previousHashes: [] });
    expect(String(read?.userId)).toBe(user);
    expect(read?.lastUsedAt).toBeInstanceOf(Date);
    const empty = fresh({ permissionCap: [] });
    await r().sessions.create(empty);
    expect((await r().sessions.findById(empty._id))?.permissionCap).toEqual([]);
    const capped = fresh({ permissionCap: ['profile:read'], parentSessionId: root._id });
    await r().sessions.create(capped);
    expect(await r().sessions.findById(capped._id)).toMatchObject({
      permissionCap: ['profile:read'],
      parentSessionId: root._id,
    });
    expect(await r().sessions.findById('no-such-session')).toBeNull();
  });

  it('refuses a second session with the same refresh hash, and an unknown method, as coded errors', async () => {
    const a = fresh();
    await r().sessions.create(a);
    const dup = await r()
      .sessions.create(fresh({ refreshHash: a.refreshHash }))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(toAppError(dup).code).toBe('conflict');
    const bad = await r()
      .sessions.create(fresh({ method: 'telepathy' }))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(toAppError(bad).code).toBe('validation_failed');
  });

  it('rotates only from the current hash of a live session, keeping the superseded one', async () => {
    const s = fresh();
    await r().sessions.create(s);
    const now = new Date();
    expect(await r().sessions.rotate(s._id, 'wrong', 'h2', now)).toBeNull();
    const rotated = await r().sessions.rotate(s._id, s.refreshHash, 'h2-' + s._id, now);
    expect(rotated).toMatchObject({ refreshHash: 'h2-' + s._id, previousHashes: [s.refreshHash], lastUsedAt: now });
    expect(await r().sessions.rotate(s._id, s.refreshHash, 'h3', now)).toBeNull();
    // The grace guard: only if the last rotation is at least as recent as `after`.
    expect(
      await r().sessions.rotate(s._id, 'h2-' + s._id, 'h3', now, { after: new Date(now.getTime() + 1) }),
    ).toBeNull();
    expect(await r().sessions.rotate(s._id, 'h2-' + s._id, 'h3-' + s._id, now, { after: now })).not.toBeNull();
  });

  it('does not rotate an expired or revoked session', async () => {
    const expired = fresh({ expiresAt: new Date(Date.now() - 1000) });
    await r().sessions.create(expired);
    expect(await r().sessions.rotate(expired._id, expired.refreshHash, 'x1', new Date())).toBeNull();
    const revoked = fresh();
    await r().sessions.create(revoked);
    await r().sessions.revoke({ ids: [revoked._id] }, 'logout');
    expect(await r().sessions.rotate(revoked._id, revoked.refreshHash, 'x2', new Date())).toBeNull();
    expect(await r().sessions.findById(revoked._id)).toMatchObject({ revokeReason: 'logout' });
  });

  it('lists a user’s live sessions oldest first and revokes by each filter once', async () => {
    const who = new Types.ObjectId().toHexString();
    const a = fresh({ userId: who, idpSid: 'realm-1' });
    const b = fresh({ userId: who, parentSessionId: a._id });
    const c = fresh({ userId: who, offlineTokenId: 'tok-1', parentIdpSid: 'realm-1' });
    for (const s of [a, b, c]) {
      await r().sessions.create(s);
      // The next session starts in a later millisecond, so "oldest first" has one answer.
      const t = Date.now();
      while (Date.now() === t) await new Promise((done) => setImmediate(done));
    }
    expect(await r().sessions.liveIdsForUser(who, new Date())).toEqual([a._id, b._id, c._id]);
    expect((await r().sessions.revoke({ parentSessionIds: [a._id] }, 'parent_revoked')).map((s) => s._id)).toEqual([
      b._id,
    ]);
    const byRealm = await r().sessions.revoke({ idpSid: 'realm-1' }, 'logout');
    expect(byRealm.map((s) => [s._id, String(s.userId), s.idpSid])).toEqual([[a._id, who, 'realm-1']]);
    expect(await r().sessions.revoke({ idpSid: 'realm-1' }, 'logout')).toEqual([]);
    expect((await r().sessions.revoke({ offlineTokenIds: ['tok-1'] }, 'x')).map((s) => s._id)).toEqual([c._id]);
    expect(await r().sessions.liveIdsForUser(who, new Date())).toEqual([]);
  });

  it('offline tokens: by id, live by hash, revoked by their user only once, and with the session that issued them', async () => {
    const owner = new Types.ObjectId().toHexString();
    const base = {
      userId: owner,
      purpose: 'ward',
      permissions: ['events:read'],
      expiresAt: new Date(Date.now() + 60_000),
    };
    const id = await r().offlineTokens.create({ ...base, tokenHash: `t-${owner}` });
    expect(await r().offlineTokens.findById(id)).toMatchObject({ purpose: 'ward', permissions: ['events:read'] });
    expect(await r().offlineTokens.findById('nope')).toBeNull();
    expect(String((await r().offlineTokens.findLiveByHash(`t-${owner}`, new Date()))?._id)).toBe(id);
    expect(await r().offlineTokens.findLiveByHash(`t-${owner}`, new Date(Date.now() + 120_000))).toBeNull();
    expect(await r().offlineTokens.revoke(id, new Types.ObjectId().toHexString())).toBe(false);
    expect(await r().offlineTokens.revoke(id, owner)).toBe(true);
    expect(await r().offlineTokens.revoke(id, owner)).toBe(false);
    expect(await r().offlineTokens.findLiveByHash(`t-${owner}`, new Date())).toBeNull();
    const issued = await r().offlineTokens.create({ ...base, tokenHash: `u-${owner}`, parentSessionId: 'parent-1' });
    expect(await r().offlineTokens.revokeIssuedBy(['parent-1'])).toEqual([issued]);
    expect(await r().offlineTokens.revokeIssuedBy(['parent-1'])).toEqual([]);
    const dup = await r()
      .offlineTokens.create({ ...base, tokenHash: `u-${owner}` })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(toAppError(dup).code).toBe('conflict');
  });
});
