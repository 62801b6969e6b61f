import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSchema, parse } from 'graphql';
import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { sortKeys } from '../../../src/data/models/user.model.js';
import { SIGNED_IN_BUDGET, checkCost } from '../../../src/http/graphql/cost.js';
import { typeDefs } from '../../../src/http/graphql/schema.js';

/**
 * What keeps the node responsive while the most expensive GraphQL document the cost limits accept runs
 * (decision 641, decision 1050): the work such a document can ask for is bounded by the budget, whatever
 * the machine. The node serves the worst accepted document in full and refuses it with one contact more,
 * and no accepted document asks for more than MAX_QR renders of the QR code or MAX_ROWS contacts.
 * How long that work holds the event loop is a figure of benchmark B13 (`npm run bench -- b13`), not a
 * verdict here: a time on a shared machine says as much about the machine as about the product.
 */
describe('GraphQL: the worst document the cost budget accepts is bounded work', () => {
  const tenant = 'gqlprobe';
  const CONTACTS = 2_000;
  /** The most contacts one accepted document may have served: the budget over a contact's weight. */
  const MAX_ROWS = 500;
  /** The most QR renders (a PNG encode each) one accepted document may ask for. */
  const MAX_QR = 2;
  let node: TestNode;
  let token: string;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
    await createUser(node, tenant, { username: 'ada', role: 'admin' });
    const { User } = node.infra.mongo.tenantDb(tenant).models;
    const now = new Date();
    const keys = sortKeys as unknown as (displayName: string, username?: string) => Record<string, unknown>;
    const docs = Array.from({ length: CONTACTS }, (_, n) => {
      const displayName = `Contact ${String(n).padStart(5, '0')}`;
      return {
        username: `c${n}`,
        idpSubject: `c${n}`,
        displayName,
        role: 'patient',
        kind: 'person',
        status: 'active',
        createdAt: now,
        updatedAt: now,
        ...keys(displayName, `c${n}`),
      };
    });
    await User.collection.insertMany(docs, { ordered: false });
    token = await tokenFor(node, tenant, 'ada');
  }, 120_000);
  afterAll(async () => {
    await node?.destroy();
  });

  const gqlSchema = buildSchema(typeDefs);
  /** The document's weighed cost, or Infinity when the node would refuse it as too complex. */
  const costOf = (doc: string) => {
    try {
      return checkCost(gqlSchema, parse(doc), undefined, undefined, true);
    } catch (e) {
      if ((e as { extensions?: { code?: string } }).extensions?.code === 'query_too_complex') return Infinity;
      throw e;
    }
  };
  const page = (i: number, take: number) =>
    `p${i}: myContacts(paging: { skip: ${(i * 100) % CONTACTS}, take: ${take} }) { total items { id displayName username } }`;
  const QR = 'generatePrivateServerConfigQrCode { dataUrl }';
  const docOf = (takes: number[], qrs = 1) =>
    `{ ${Array.from({ length: qrs }, (_, i) => `qr${i}: ${QR}`).join(' ')} ${takes.map((t, i) => page(i, t)).join(' ')} }`;
  /**
   * The most contact pages the signed-in budget accepts beside `qrs` QR renders, built from the cost
   * table: pages of 100 while they fit, then one more page as large as the rest of the budget allows.
   * At most 50 pages are tried: a cost table that let more through is already past any bound here.
   */
  const worst = (qrs: number): number[] => {
    const takes: number[] = [];
    while (takes.length < 50 && costOf(docOf([...takes, 100], qrs)) <= SIGNED_IN_BUDGET) takes.push(100);
    let last = 99;
    while (last > 0 && costOf(docOf([...takes, last], qrs)) > SIGNED_IN_BUDGET) last--;
    if (last > 0) takes.push(last);
    return takes;
  };
  const post = (query: string) => node.http.post('/graphql', { tenant, token, body: { query } });
  const served = async (takes: number[], qrs: number) => {
    const r = await post(docOf(takes, qrs));
    expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 200, errors: undefined });
    const data = r.body.data as Record<string, { items?: unknown[]; dataUrl?: string }>;
    return {
      qrs: Object.keys(data).filter((k) => /^data:image\/png;base64,/.test(data[k]!.dataUrl ?? '')).length,
      pages: takes.map((_, i) => data[`p${i}`]!.items!.length),
    };
  };
  const refusal = async (doc: string) => {
    const r = await post(doc);
    return {
      status: r.status,
      code: (r.body.errors as { extensions?: { code?: string } }[] | undefined)?.[0]?.extensions?.code,
    };
  };
  const tooComplex = { status: 400, code: 'query_too_complex' };

  it('serves the worst accepted document of decision 641 (the QR code and contact pages) in full', async () => {
    const takes = worst(1);
    const cost = costOf(docOf(takes));
    expect(cost).toBeLessThanOrEqual(SIGNED_IN_BUDGET);
    expect(cost).toBeGreaterThan(SIGNED_IN_BUDGET * 0.98);
    expect(await served(takes, 1)).toEqual({ qrs: 1, pages: takes });
    // One contact more is refused before any resolver runs.
    const oneMore = takes.at(-1)! < 100 ? [...takes.slice(0, -1), takes.at(-1)! + 1] : [...takes, 1];
    expect(await refusal(docOf(oneMore))).toEqual(tooComplex);
  });

  it('bounds the work any accepted document asks for: MAX_QR renders and MAX_ROWS contacts', async () => {
    // The most QR renders a document can ask for, and the most contacts (pages only).
    expect(await served([], MAX_QR)).toEqual({ qrs: MAX_QR, pages: [] });
    expect(await refusal(docOf([], MAX_QR + 1))).toEqual(tooComplex);
    const takes = worst(0);
    expect(takes.reduce((n, t) => n + t, 0)).toBeLessThanOrEqual(MAX_ROWS);
    expect(await served(takes, 0)).toEqual({ qrs: 0, pages: takes });
    // A take past PAGE_MAX_TAKE is weighed as the page the service really serves (clamped), never as less.
    expect(await refusal(docOf([...takes, 100_000], 0))).toEqual(tooComplex);
  });
});
