import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import { FUZZ_ENV, SOAK, Tally, fuzz, nastyValue, opsOf, runs } from './kit.js';

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
    node = await startTestNode({ ROLES: 'http,hub,actors', ...FUZZ_ENV });
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
    (s.timeout(15_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<Ack> }).emitWithAck(method, ...args).catch((e: Error) => e);

  const rawEmit = (s: HubClient, ev: string, ...args: unknown[]) => (s as unknown as { emit(e: string, ...a: unknown[]): void }).emit(ev, ...args);

  it('answers malformed, wrongly typed and boundary arguments with coded nacks, and keeps the socket', async () => {
    const sockets = { admin: await socket(admin), patient: await socket(patient) };
    const input = fc.tuple(fc.array(nastyValue, { maxLength: 3 }), fc.constantFrom<'admin' | 'patient'>('admin', 'admin', 'patient'));
    for (const op of opsOf('hub')) {
      await fuzz(input, runs(12), async ([args, who]) => {
        const problem = hubBreach(await ask(sockets[who], op.name, args));
        tally.add(`hub.${op.name}`, problem);
        return problem;
      });
      // Without an acknowledgement callback the server must not throw either.
      rawEmit(sockets.admin, op.name, { x: 1 });
    }
    expect(tally.breaches).toEqual([]);
    expect(sockets.admin.connected && sockets.patient.connected).toBe(true);
    expect(tally.perOp.size).toBe(opsOf('hub').length);
  }, SOAK ? 1_800_000 : 120_000);

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
    process.stdout.write(`Hub fuzz: ${tally.total} inputs over ${tally.perOp.size} methods, ${tally.breaches.length} breaches\n`);
  });
});
