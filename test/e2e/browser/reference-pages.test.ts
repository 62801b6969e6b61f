import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Page } from 'puppeteer-core';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { expectCleanPage, openBrowser, type BrowserFixture, type WatchedPage } from '../../support/browser.js';

/**
 * The REST reference (Swagger UI) and the GraphQL explorer (GraphiQL) in a real headless chromium.
 * A browser rendering a page with a few hundred operations on a shared two-core machine takes tens of
 * seconds: generous limits, no timing asserted.
 */
jest.setTimeout(240_000);

describe('reference pages in a browser', () => {
  let node: TestNode;
  let browser: BrowserFixture;
  let token: string;
  let origin: string;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
    await createUser(node, 'acme', { username: 'dr.page', role: 'clinician', displayName: 'Dr Page' });
    token = await tokenFor(node, 'acme', 'dr.page');
    origin = `http://acme.localhost:${new URL(node.url!).port}`;
    browser = await openBrowser({ pageTimeoutMs: 180_000 });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await node?.destroy();
  });

  /** A watched page at `path` of the tenant's origin; `prepare` runs before its first document. */
  async function open(path: string, prepare?: (page: Page) => Promise<unknown>): Promise<WatchedPage> {
    const opened = await browser.newPage();
    await prepare?.(opened.page);
    const res = await opened.page.goto(`${origin}${path}`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    return opened;
  }

  it('/api/docs lists every operation of the document and a try-it call with a bearer token answers 200', async () => {
    const doc = JSON.parse((await node.http.get('/api/docs/openapi.json')).text) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    );
    const { page, watch } = await open('/api/docs');
    await page.waitForSelector('.opblock');
    const listed = await page.$$eval('.opblock', (els) =>
      els.map(
        (e) =>
          `${e.querySelector('.opblock-summary-method')?.textContent} ${e.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    );
    expect(listed.sort()).toEqual(operations.sort());

    await page.click('.btn.authorize');
    await page.waitForSelector('.auth-container input');
    await page.type('.auth-container input', token);
    await page.click('.auth-btn-wrapper .btn.modal-btn.auth.authorize');
    await page.click('.auth-btn-wrapper .btn-done');

    const me = await page.waitForSelector('.opblock-get .opblock-summary-path[data-path="/api/contacts/me"]');
    await me!.click();
    await page.waitForSelector('.opblock.is-open .execute');
    await page.click('.opblock.is-open .execute');
    const status = await page.waitForSelector(
      '.opblock.is-open .live-responses-table tr.response .response-col_status',
    );
    expect(await status!.evaluate((e) => e.textContent?.trim())).toBe('200');
    const body = await page.$eval(
      '.opblock.is-open .live-responses-table tr.response .response-col_description pre',
      (e) => e.textContent ?? '',
    );
    expect(JSON.parse(body)).toMatchObject({ displayName: 'Dr Page' });
    expectCleanPage(watch);
  });

  it('/graphql in a browser is GraphiQL: a `me` query with the token in its headers shows the user', async () => {
    // What the explorer keeps between visits (shouldPersistHeaders): the saved query and headers.
    const { page, watch } = await open('/graphql', (p) =>
      p.evaluateOnNewDocument(`localStorage.setItem('graphiql:query', '{ me { username displayName } }');
        localStorage.setItem('graphiql:headers', ${JSON.stringify(JSON.stringify({ Authorization: `Bearer ${token}` }))});`),
    );
    await page.waitForSelector('.graphiql-execute-button');
    // The schema came through introspection: the documentation explorer lists the query fields.
    await page.waitForSelector('.graphiql-execute-button:not([disabled])');
    await page.click('.graphiql-execute-button');
    // A string: this test code has no DOM types.
    await page.waitForFunction(`(document.querySelector('.result-window')?.textContent ?? '').includes('dr.page')`);
    // Monaco renders spaces as no-break spaces.
    const result = (await page.$eval('.result-window', (e) => e.textContent ?? '')).replace(/\u00a0/g, ' ');
    expect(JSON.parse(result)).toEqual({ data: { me: { username: 'dr.page', displayName: 'Dr Page' } } });
    // The documentation explorer lists the operations from the schema (introspection with the same token).
    await page.click('[aria-label="Show Documentation Explorer"]');
    await page.waitForSelector('.graphiql-doc-explorer-root-type');
    await page.click('.graphiql-doc-explorer-type-name');
    await page.waitForSelector('.graphiql-doc-explorer-field-name');
    const fields = await page.$$eval('.graphiql-doc-explorer-field-name', (els) => els.map((e) => e.textContent));
    expect(fields).toEqual(
      expect.arrayContaining(['me', 'tenantConfig', 'basicTenantInfo', 'myContacts', 'hasPin', 'myNotice']),
    );
    expectCleanPage(watch);
  });

  it('/graphql opened without a token loads the schema (no Authorization header sent) and asks for none', async () => {
    const { page, watch } = await open('/graphql');
    const sent: { authorization?: string; body: string }[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/graphql')
        sent.push({ authorization: r.headers().authorization, body: r.postData() ?? '' });
    });
    // The documentation explorer lists the Query fields: introspection answered without a token.
    await page.waitForSelector('.graphiql-execute-button:not([disabled])');
    await page.click('[aria-label="Show Documentation Explorer"]');
    await page.waitForSelector('.graphiql-doc-explorer-type-name');
    await page.click('.graphiql-doc-explorer-type-name');
    await page.waitForSelector('.graphiql-doc-explorer-field-name');
    const fields = await page.$$eval('.graphiql-doc-explorer-field-name', (els) => els.map((e) => e.textContent));
    expect(fields).toEqual(expect.arrayContaining(['me', 'basicTenantInfo']));
    // The headers editor starts with no empty bearer header to send.
    const headers = (await page.$eval('.graphiql-editor-tool', (e) => e.textContent ?? '')).replace(/\u00a0/g, ' ');
    expect(headers).not.toMatch(/Bearer/);
    expect(await page.evaluate(`document.body.textContent.includes('Error fetching schema')`)).toBe(false);
    // A header whose value is empty (as older visits persisted it) is not sent either.
    await page.evaluate(`localStorage.setItem('graphiql:headers', JSON.stringify({ Authorization: 'Bearer ' }));
      localStorage.setItem('graphiql:query', 'query Me { me { id } }');`);
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('.graphiql-execute-button:not([disabled])');
    const answered = page.waitForResponse(
      (r) => r.request().method() === 'POST' && (r.request().postData() ?? '').includes('query Me'),
    );
    await page.click('.graphiql-execute-button');
    // The query ran without a token: refused as unauthenticated (sign in), not as a malformed token.
    const me = await answered;
    expect(((await me.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      'unauthenticated',
    );
    expect(sent.some((r) => r.body.includes('IntrospectionQuery'))).toBe(true);
    expect(sent.filter((r) => r.authorization !== undefined)).toEqual([]);
    expect(watch.cspViolations).toEqual([]);
    // The one refusal is the `me` query's own 401 (sign in), not the schema's.
    expect(watch.errors.filter((e) => !/^401 .*\/graphql$/.test(e))).toEqual([]);
  });

  it('API requests to /graphql keep CSRF prevention; only a browser navigation gets the page', async () => {
    const html = await node.http.get('/graphql', { tenant: 'acme', headers: { accept: 'text/html' } });
    expect(html.status).toBe(200);
    expect(html.text).toContain('/graphql/assets/graphiql.js');
    // A GET query without a preflight-forcing header is what a cross-site <img> or form could send.
    const simpleGet = await node.http.get('/graphql?query=%7B__typename%7D', {
      tenant: 'acme',
      headers: { accept: 'text/html' },
    });
    expect(simpleGet.status).toBe(400);
    expect(simpleGet.text).toMatch(/CSRF/);
    const formPost = await node.http.post('/graphql', {
      tenant: 'acme',
      headers: { 'content-type': 'text/plain' },
      rawBody: '{"query":"{__typename}"}',
    });
    expect(formPost.status).toBe(400);
    const json = await node.http.get('/graphql', { tenant: 'acme', headers: { accept: 'application/json' } });
    expect(json.text).not.toContain('graphiql');
    const api = await node.http.post('/graphql', { tenant: 'acme', body: { query: '{ __typename }' } });
    expect(api.status).toBe(200);
    expect(api.body).toEqual({ data: { __typename: 'Query' } });
  });
});
