import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import express, { Router } from 'express';
import { ALL_GROUPS } from '../../../src/http/routes/groups.js';
import { openApiPath } from '../../../src/http/openapi/openapi.js';
import { servedRoutes } from '../../support/express-routes.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/** Mounts that are not REST operations of the specification, each with why it has no route declaration. */
const NOT_REST_OPERATIONS: Record<string, string> = {
  '/api/docs': 'the documentation itself (the OpenAPI document and its reference page)',
  '/graphql': 'the GraphQL endpoint, described by its SDL (docs/api/schema.graphql)',
  '/realms': "the embedded identity provider (OpenID Connect's own protocol; development and tests)",
  '/auth/callback': 'an HTML page for browsers (the realm redirect URI, decision 330), not an API operation',
  '/login/approve': 'an HTML page for browsers (the QR approval page, decision 330), not an API operation',
};

const declared = () => new Set(ALL_GROUPS.flatMap((g) => g.routes.map((r) => `${r.method} ${g.base}${r.path}`)));
const undeclared = (app: express.Express) =>
  servedRoutes(app)
    .filter(
      (r) => !Object.keys(NOT_REST_OPERATIONS).some((prefix) => r.path === prefix || r.path.startsWith(`${prefix}/`)),
    )
    .map((r) => `${r.method} ${r.path}`)
    .filter((r) => !declared().has(r));

/** `| METHOD | /path?query | ... |` rows of the specification's endpoint tables. */
function specEndpoints(): string[] {
  const spec = readFileSync(new URL('../../../docs/spec/SPEC.md', import.meta.url), 'utf8');
  return [...spec.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| (\/[^ |?]+)[^|]*\|/gm)].map(
    (m) => `${m[1]!.toLowerCase()} ${m[2]!.replace('{*', '{')}`,
  );
}

describe('one route style: every Express route is a declared, documented operation', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(async () => node?.destroy());

  it('serves no REST route without a declaration, and every declaration is served', () => {
    const served = servedRoutes(node.app!);
    expect(served.length).toBeGreaterThan(50);
    expect(undeclared(node.app!)).toEqual([]);
    const servedSet = new Set(served.map((r) => `${r.method} ${r.path}`));
    expect([...declared()].filter((d) => !servedSet.has(d))).toEqual([]);
  });

  it('answers 201 from exactly the operations that create something the caller can address afterwards', () => {
    // A new event, group, notice, offline token, login code, stored file or webhook subscription; everything
    // else answers 200 (or 202/204).
    const CREATES = [
      'account.offlineToken',
      'account.qrCode',
      'contacts.groupCreate',
      'events.create',
      'media.syncFiles',
      'media.upload',
      'notification.save',
      'webhooks.createSubscription',
    ];
    const created = ALL_GROUPS.flatMap((g) => g.routes)
      .filter((r) => r.status === 201)
      .map((r) => r.operationId)
      .sort();
    expect(created).toEqual(CREATES);
  });

  it('finds a hand-written route that has no declaration', () => {
    const app = express();
    const r = Router();
    r.get('/undeclared/:id', (_req, res) => void res.end());
    app.use('/api/events', r);
    expect(undeclared(app)).toEqual(['get /api/events/undeclared/:id']);
  });

  it('documents all 47 REST endpoints of the specification in the served document', async () => {
    const endpoints = specEndpoints();
    expect(endpoints).toHaveLength(47);
    const doc = (await node.http.get('/api/docs/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)),
    );
    expect(endpoints.filter((e) => !documented.has(e))).toEqual([]);
    // The probes are served on the API port, so they are documented too.
    expect(documented).toContain('get /healthz');
    expect(documented).toContain('get /readyz');
    for (const g of ALL_GROUPS)
      for (const r of g.routes) expect(documented).toContain(`${r.method} ${openApiPath(g.base, r.path)}`);
  });
});
