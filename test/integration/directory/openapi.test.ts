import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { OPERATIONS } from '../../../src/operations/operation-table.js';
import { DOCUMENTED_GROUPS, openApiDocument, openApiPath } from '../../../src/http/openapi/openapi.js';
import { isProbe } from '../../../src/http/routes/route-spec.js';
import { startTestNode, type TestNode } from '../../support/node.js';

describe('OpenAPI document and docs page', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(async () => node.destroy());

  it('matches the checked-in docs/api/openapi.json (regenerate: npx tsx src/http/openapi/write-docs.ts)', () => {
    const checkedIn = JSON.parse(readFileSync(new URL('../../../docs/api/openapi.json', import.meta.url), 'utf8'));
    expect(checkedIn).toEqual(openApiDocument());
  });

  it('documents every route with the exact SPEC path of its permission-table entry', () => {
    const doc = openApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const routes = DOCUMENTED_GROUPS.flatMap((g) => g.routes);
    // Every operation of the document is one of the routes checked below (and there are some).
    expect(routes.length).toBe(Object.values(doc.paths).flatMap((ops) => Object.keys(ops)).length);
    expect(routes.length).toBeGreaterThan(0);
    for (const g of DOCUMENTED_GROUPS) {
      for (const r of g.routes) {
        const path = openApiPath(g.base, r.path);
        expect(doc.paths[path]?.[r.method]?.operationId).toBe(r.operationId);
        if (!isProbe(r.operationId))
          expect(OPERATIONS[r.operationId].name.replace('{*', '{')).toBe(`${r.method.toUpperCase()} ${path}`);
      }
    }
  });

  it('serves the document and Swagger UI from the service itself', async () => {
    const json = await node.http.get('/api/docs/openapi.json');
    expect(json.status).toBe(200);
    expect(json.body.openapi).toBe('3.1.0');
    expect(json.body).toEqual(
      JSON.parse(readFileSync(new URL('../../../docs/api/openapi.json', import.meta.url), 'utf8')),
    );
    expect(json.body.paths['/api/events/get/{eventId}'].get.parameters[0]).toMatchObject({
      name: 'eventId',
      in: 'path',
      required: true,
    });
    const page = await node.http.get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    // Every script and stylesheet comes from this host; the page has no inline script.
    const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(2);
    for (const u of urls) expect(u).toMatch(/^\/api\/docs\/assets\//);
    expect(page.text).not.toMatch(/<script>/);
    for (const u of urls) expect((await node.http.get(u)).status).toBe(200);
    const init = await node.http.get('/api/docs/assets/init.js');
    expect(init.text).toContain("url: '/api/docs/openapi.json'");
    // Only the named files of the package: not its demo page (inline script, public validator).
    expect((await node.http.get('/api/docs/assets/index.html')).status).toBe(404);
  });
});
