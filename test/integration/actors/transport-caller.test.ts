import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { actorKeys, type ActorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { RedisTransport, type RemoteRequest } from '../../../src/actors/runtime/transport.js';
import { createRedis, duplicateRedis, type RedisClient } from '../../../src/data/redis.js';
import { callerOfPrincipal, catalogueId, PERMISSION_CATALOGUE } from '../../../src/kernel/caller.js';
import { BUILTIN_ROLES, PERMISSIONS } from '../../../src/kernel/permissions.js';
import { createLogger } from '../../../src/observability/logger.js';

/**
 * A request's caller between nodes (decision 1156): its permissions cross as a mask once the peer has
 * said (in a reply) that it reads the same catalogue; a node that reads the mask differently, or not at
 * all (an earlier release), never serves a turn on it: the sender sends the names again.
 */
describe("actor transport: the caller's permissions on the wire", () => {
  let redis: RedisClient;
  const logger = createLogger({ level: 'silent' });
  const clinician = callerOfPrincipal({
    tenant: 'acme',
    userId: 'c'.repeat(24),
    username: 'dr-c',
    role: 'clinician',
    permissions: new Set(BUILTIN_ROLES.clinician!.permissions),
    scheme: 'internal',
    sessionId: 's-1',
  });
  const sorted = [...clinician.permissions].sort();

  beforeAll(() => {
    redis = createRedis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390', 'transport-caller-test');
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** The envelopes the client wrote to `key` (the outbox's script calls), as they went. */
  function envelopesTo(key: string) {
    const spy = jest.spyOn(redis, 'evalsha');
    return {
      list: (): Record<string, unknown>[] =>
        spy.mock.calls
          .filter((c) => c.includes(key))
          .flatMap((c) => (c as unknown[]).slice(4) as string[])
          .map((raw) => JSON.parse(raw) as Record<string, unknown>),
      raw: (): string[] =>
        spy.mock.calls.filter((c) => c.includes(key)).flatMap((c) => (c as unknown[]).slice(4) as string[]),
      restore: () => spy.mockRestore(),
    };
  }

  function transport(
    keys: ActorKeys,
    nodeId: string,
    onRequest: (r: RemoteRequest) => Promise<unknown>,
    onNamesResent?: () => void,
  ) {
    const t = new RedisTransport({ redis, keys, nodeId, logger, onRequest, onNamesResent });
    t.start();
    return t;
  }

  const ask = (t: RedisTransport, node: string) =>
    t.request(
      node,
      {
        to: { tenant: 'acme', kind: 'meeting', id: 'm1' },
        msg: { type: 'details', caller: clinician },
        dedupeId: randomUUID(),
        attempt: 1,
      },
      5_000,
    );

  it("sends the names until the peer has replied, the mask after, and the peer's turn sees the same permissions", async () => {
    const keys = actorKeys(`test:tr:${randomUUID()}:`);
    const seen: unknown[] = [];
    const b = transport(keys, 'b', async (r) => {
      const c = (r.msg as { caller: { permissions: string[] } }).caller;
      seen.push(c);
      return [...c.permissions].sort();
    });
    const a = transport(keys, 'a', async () => undefined);
    const sent = envelopesTo(keys.inbox('b'));
    try {
      expect(await ask(a, 'b')).toEqual(sorted);
      expect(await ask(a, 'b')).toEqual(sorted);
      const [first, second] = sent.list() as { msg: { caller: Record<string, unknown> } }[];
      expect(first!.msg.caller.permissions).toEqual(clinician.permissions);
      expect(first!.msg.caller.pm).toBeUndefined();
      expect(second!.msg.caller.permissions).toEqual([]);
      expect(second!.msg.caller.pm).toMatch(new RegExp(`^${PERMISSION_CATALOGUE}\\.`));
      const [r1, r2] = sent.raw();
      expect(r1!.length - r2!.length).toBeGreaterThan(250);
      // The turn got the caller whole both times (the mask read back), not the wire's empty list.
      const { permissions: _p, ...rest } = clinician;
      for (const c of seen) expect(c).toMatchObject(rest);
    } finally {
      sent.restore();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  /**
   * A node that replies without naming the sender's catalogue, under the id of a node that did: the
   * next release's node restarted as an earlier one (it reads `permissions` and knows no mask), or one
   * naming another catalogue. It answers with the number of permissions the turn was given.
   */
  async function impostor(keys: ActorKeys, node: string, pc: string | undefined, got: number[]) {
    const conn = duplicateRedis(redis, { connectionName: `test-impostor-${node}` });
    let running = true;
    const loop = (async () => {
      while (running) {
        const popped = (await conn.call('BLMPOP', 1, 1, keys.inbox(node), 'RIGHT', 'COUNT', 10)) as
          [string, string[]] | null;
        for (const raw of popped?.[1] ?? []) {
          const env = JSON.parse(raw) as { rid: string; from: string; msg: { caller: { permissions: string[] } } };
          const n = env.msg.caller.permissions.length;
          got.push(n);
          const reply = { t: 'rep', rid: env.rid, ok: true, value: n, ...(pc ? { pc } : {}) };
          await redis.lpush(keys.replies(env.from), JSON.stringify(reply));
        }
      }
    })();
    return async () => {
      running = false;
      await loop;
      conn.disconnect();
    };
  }

  it.each([
    ['an earlier release (no catalogue in its reply)', undefined],
    ['a node of another catalogue', catalogueId([...PERMISSIONS, 'reports:read'])],
  ])(
    'sends the request again with the names when %s answered the mask, and names to it from then on',
    async (_, pc) => {
      const keys = actorKeys(`test:tr:${randomUUID()}:`);
      const b = transport(keys, 'b', async () => 'served by b');
      let resent = 0;
      const a = transport(
        keys,
        'a',
        async () => undefined,
        () => resent++,
      );
      const got: number[] = [];
      let stopImpostor: (() => Promise<void>) | undefined;
      try {
        expect(await ask(a, 'b')).toBe('served by b');
        await b.stop();
        stopImpostor = await impostor(keys, 'b', pc, got);
        // The mask went first (a knew b's catalogue); the impostor gave that turn nothing, so a sent it
        // again with the names, and the answer a resolves with is the named one's.
        expect(await ask(a, 'b')).toBe(19);
        expect(got).toEqual([0, 19]);
        expect(await ask(a, 'b')).toBe(19);
        expect(got).toEqual([0, 19, 19]);
        expect(resent).toBe(1);
      } finally {
        await stopImpostor?.();
        await a.stop();
      }
    },
  );

  it('refuses a mask over another catalogue without serving it, and names its own catalogue in the refusal', async () => {
    const keys = actorKeys(`test:tr:${randomUUID()}:`);
    const served: unknown[] = [];
    const b = transport(keys, 'b', async (r) => served.push(r));
    const reader = duplicateRedis(redis, { connectionName: 'test-reader' });
    try {
      const other = catalogueId([...PERMISSIONS].reverse());
      const env = {
        t: 'req',
        rid: 'r-1',
        from: 'x',
        to: { tenant: 'acme', kind: 'meeting', id: 'm1' },
        msg: { type: 'details', caller: { ...clinician, permissions: [], pm: `${other}.7ffff` } },
        dedupeId: 'd-1',
        attempt: 1,
      };
      await redis.lpush(keys.inbox('b'), JSON.stringify(env));
      const popped = (await reader.call('BLPOP', keys.replies('x'), 5)) as [string, string] | null;
      expect(JSON.parse(popped![1])).toEqual({
        t: 'rep',
        rid: 'r-1',
        ok: false,
        error: { code: 'service_unavailable', message: 'permission catalogue differs' },
        pc: PERMISSION_CATALOGUE,
      });
      expect(served).toEqual([]);
    } finally {
      reader.disconnect();
      await b.stop();
    }
  });
});
