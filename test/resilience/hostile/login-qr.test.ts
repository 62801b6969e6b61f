import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import * as loginCodes from '../../../src/core/identity/login-code.service.js';

/**
 * The public login QR (`GET /api/account/qrCode`, no token) renders its PNG on the worker thread, and
 * unauthenticated callers cannot queue unbounded renders: a tenant's (and an address's) renders in
 * flight are bounded, past which the answer is 429 `rate_limited` at once.
 */
describe('public login QR codes render off the main thread, bounded per caller', () => {
  let node: TestNode;
  const tenant = 'loginqr';

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.ensure({ name: tenant });
  });
  afterAll(async () => node?.destroy());
  /** The node's renderer (its infra): its counters say what ran on the worker thread. */
  const qr = () => node.infra.qr;

  const QR_RENDERS_PER_TENANT = loginCodes.QR_RENDERS_PER_TENANT;
  const create = () => node.http.get('/api/account/qrCode', { tenant });

  it('renders the login QR on the worker thread', async () => {
    const before = qr().rendered;
    const r = await create();
    expect(r.status).toBe(201);
    expect(r.body.qrCode).toMatch(/^data:image\/png;base64,/);
    expect(qr().rendered).toBe(before + 1);
  });

  it("answers rate_limited, without queueing, while the tenant's renders in flight are at their bound", async () => {
    // Fill the tenant's bound: the worker renders in turn, so one large render first holds them all in flight.
    const size = (i: number) => ({ errorCorrectionLevel: 'H' as const, margin: 4, width: i === 0 ? 2500 : 100 });
    const filling = Array.from({ length: QR_RENDERS_PER_TENANT }, (_, i) =>
      qr().render(`https://fill.example/${i}`, size(i), [{ key: `t:${tenant}`, limit: QR_RENDERS_PER_TENANT }]),
    );
    const refused = await create();
    const pendingAfter = qr().inFlightFor(`t:${tenant}`);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBe('1');
    expect(pendingAfter).toBe(QR_RENDERS_PER_TENANT);
    await Promise.all(filling);
    expect((await create()).status).toBe(201);
  });
});
