import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ERROR_CODES } from '../../../src/kernel/errors.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import { HUB_METHODS } from '../../../src/hub/hub.role.js';
import { TENANT_MODEL_NAMES } from '../../../src/data/tenant-models.js';
import { privateRedisDb, tenantState } from '../../support/tenant-state.js';
import {
  FUZZ_ENV,
  FUZZ_ONLY,
  FUZZ_PER_TARGET,
  SOAK,
  Tally,
  batches,
  fuzz,
  nastyValue,
  opsOf,
  selected,
  stateDiff,
} from './kit.js';

type Ack = { ok: boolean; error?: { code?: string; message?: string } };

/** A nack must carry a registered code other than `internal`; an ack that never comes is a breach too. */
function hubBreach(ack: Ack | Error): string | undefined {
  if (ack instanceof Error) return `no ack: ${ack.message}`;
  if (ack.ok) return undefined;
  const code = ack.error?.code;
  if (!code || !(code in ERROR_CODES)) return `nack with unregistered code ${String(code)}`;
  if (code === 'internal') return `internal: ${ack.error?.message}`;
  return undefined;
}

describe('hostile hub input: every method of the permission table', () => {
  let node: TestNode;
  let admin: string;
  let patient: string;
  const open: HubClient[] = [];
  const tally = new Tally();

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors', ...FUZZ_ENV, REDIS_URL: privateRedisDb() });
    await createUser(node, 'fuzzh', { username: 'ada', role: 'admin' });
    await createUser(node, 'fuzzh', { username: 'pat', role: 'patient' });
    admin = await tokenFor(node, 'fuzzh', 'ada');
    patient = await tokenFor(node, 'fuzzh', 'pat');
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node?.destroy();
  });

  const socket = async (token: string) => {
    const s = await connect(node.url!, 'fuzzh', { token });
    open.push(s);
    return s;
  };
  const ask = (s: HubClient, method: string, args: unknown[]): Promise<Ack | Error> =>
    (s.timeout(15_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<Ack> })
      .emitWithAck(method, ...args)
      .catch((e: Error) => e);

  const rawEmit = (s: HubClient, ev: string, ...args: unknown[]) =>
    (s as unknown as { emit(e: string, ...a: unknown[]): void }).emit(ev, ...args);

  /** What the tenant has stored (documents but the audit trail, and actor snapshots), read back around refused calls. */
  const stored = () => tenantState(node, 'fuzzh', { collections: TENANT_MODEL_NAMES.filter((n) => n !== 'Audit') });
  let stateChecks = 0;

  it(
    `answers ${FUZZ_PER_TARGET} malformed, wrongly typed and boundary argument lists per method with coded nacks, keeps the socket, and a refused call changes nothing stored`,
    async () => {
      const sockets = { admin: await socket(admin), patient: await socket(patient) };
      const methods = HUB_METHODS.map((m) => m.name).sort();
      expect(
        opsOf('hub')
          .map((o) => o.name)
          .sort(),
      ).toEqual(methods);
      const ops = opsOf('hub').filter((o) => selected(o.id));
      const input = fc.tuple(
        fc.array(nastyValue, { maxLength: 3 }),
        fc.constantFrom<'admin' | 'patient'>('admin', 'admin', 'patient'),
      );
      for (const op of ops) {
        const [arb, numRuns] = batches(input);
        let last: Record<string, unknown> | undefined;
        await fuzz(arb, numRuns, async (batch) => {
          const base = (last ??= await stored());
          const acks = await Promise.all(batch.map(([args, who]) => ask(sockets[who], op.name, args)));
          const problems = acks.map((ack) => hubBreach(ack));
          for (const p of problems) tally.add(op.id, p);
          if (problems.some(Boolean)) return problems.find(Boolean);
          last = await stored();
          if (acks.some((a) => !(a instanceof Error) && a.ok)) return undefined;
          stateChecks += 1;
          const changed = stateDiff(base, last);
          return changed && `refused call to ${op.name} changed stored state: ${changed}`;
        });
        // Without an acknowledgement callback the server must not throw either.
        rawEmit(sockets.admin, op.name, { x: 1 });
      }
      expect(tally.breaches).toEqual([]);
      expect(sockets.admin.connected && sockets.patient.connected).toBe(true);
      if (FUZZ_ONLY) return;
      expect(tally.perOp.size).toBe(HUB_METHODS.length);
      expect(ops.filter((o) => (tally.perOp.get(o.id) ?? 0) < FUZZ_PER_TARGET).map((o) => o.id)).toEqual([]);
    },
    SOAK ? 1_800_000 : 240_000,
  );

  it('ignores unknown events and survives an oversized frame (the socket may be dropped, the node is not)', async () => {
    const s = await socket(admin);
    rawEmit(s, 'noSuchMethod', { a: 1 });
    rawEmit(s, '__proto__');
    const closed = new Promise<string>((resolve) => s.once('disconnect', (reason) => resolve(reason)));
    rawEmit(s, 'joinRoom', 'x'.repeat(3 * 1024 * 1024));
    expect(await closed).toBeTruthy();
    const again = await socket(admin);
    // Answered (a room of no event of the caller's): the new socket is served.
    const ack = await ask(again, 'joinRoom', ['0'.repeat(24)]);
    expect(ack).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    tally.add('hub.frames', hubBreach(ack));
  });

  it('still answers /healthz afterwards', async () => {
    expect((await node.http.get('/healthz')).status).toBe(200);
    process.stdout.write(
      `Hub fuzz: ${tally.total} inputs over ${tally.perOp.size} methods (min ${Math.min(...opsOf('hub').map((o) => tally.perOp.get(o.id) ?? 0))} per method), ${stateChecks} refused batches read back unchanged, ${tally.breaches.length} breaches\n`,
    );
  });
});
