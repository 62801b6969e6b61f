import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { startTestNode, type TestNode } from '../../support/node.js';
import { freePort } from '../../support/auth.js';
import { request, type HttpResult } from '../../support/http.js';

/** The directives of a Content-Security-Policy header, by name. */
function csp(r: HttpResult): Map<string, string[]> {
  const header = String(r.headers['content-security-policy'] ?? '');
  return new Map(
    header
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

const inlineScripts = (html: string) => [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);

/** What every HTML page the service serves must carry. */
function expectHardenedPage(r: HttpResult, what: string): void {
  expect(`${what}: ${r.headers['content-type']}`).toMatch(/text\/html/);
  const policy = csp(r);
  const scriptSrc = policy.get('script-src') ?? policy.get('default-src');
  expect(scriptSrc).toBeDefined();
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  expect(scriptSrc).not.toContain("'unsafe-eval'");
  expect(scriptSrc).not.toContain('*');
  expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  expect(policy.get('object-src')).toEqual(["'none'"]);
  // Inline scripts the page has are allowed by their hash, so the page still works.
  for (const body of inlineScripts(r.text)) {
    expect(scriptSrc).toContain(`'sha256-${createHash('sha256').update(body).digest('base64')}'`);
  }
  expect(r.headers['x-frame-options']).toBe('DENY');
  expect(r.headers['referrer-policy']).toBe('no-referrer');
  expect(r.headers['x-content-type-options']).toBe('nosniff');
  expect(String(r.headers['permissions-policy'])).toMatch(/camera=\(\)/);
  // Served over plain http: no HSTS (see the https case below).
  expect(r.headers['strict-transport-security']).toBeUndefined();
}

describe('security headers on every HTML page', () => {
  let node: TestNode;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    node = await startTestNode({ ROLES: 'http,idp', PORT: String(port), PUBLIC_URL: base, TRUST_PROXY: 'loopback' });
    await node.services.tenants.create({ name: 'acme', displayName: 'Acme Hospital' });
  });
  afterAll(async () => node?.destroy());

  it('the API reference page (Swagger UI: no inline script, base policy unchanged)', async () => {
    const r = await node.http.get('/api/docs', { tenant: 'acme' });
    expect(r.status).toBe(200);
    expect(inlineScripts(r.text)).toHaveLength(0);
    expectHardenedPage(r, 'docs');
    expect(csp(r).get('style-src')).toEqual(["'self'"]);
  });

  it('the GraphQL explorer (GraphiQL: no inline script; inline styles only for its editor)', async () => {
    const r = await node.http.get('/graphql', { tenant: 'acme', headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(inlineScripts(r.text)).toHaveLength(0);
    expectHardenedPage(r, 'explorer');
    expect(csp(r).get('script-src')).toEqual(["'self'"]);
    expect(csp(r).get('connect-src')).toEqual(["'self'"]);
  });

  it("the realm's sign-in page, also when the password was wrong", async () => {
    const config = await node.services.auth.realms.configuration('acme');
    const authUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${base}/auth/callback`,
      scope: 'openid',
      state: oidc.randomState(),
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const toLogin = await request(base, 'GET', authUrl.pathname + authUrl.search);
    expect(toLogin.status).toBe(303);
    const cookie = ([] as string[])
      .concat(toLogin.headers['set-cookie'] ?? [])
      .map((c) => c.split(';')[0])
      .join('; ');
    const page = await request(base, 'GET', new URL(toLogin.headers.location!, base).pathname, { headers: { cookie } });
    expect(page.status).toBe(200);
    expectHardenedPage(page, 'sign-in');
    const action = /action="([^"]+)"/.exec(page.text)![1]!;
    const wrong = await request(base, 'POST', action, {
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'username=nobody&password=wrong',
    });
    expect(wrong.status).toBe(401);
    expectHardenedPage(wrong, 'sign-in failed');
  });

  it("the realm's sign-out confirmation and sign-out success pages", async () => {
    const confirm = await request(base, 'GET', '/realms/acme/session/end');
    expect(confirm.status).toBe(200);
    expectHardenedPage(confirm, 'sign-out');
    const done = await request(base, 'GET', '/realms/acme/session/end/success');
    expect(done.status).toBe(200);
    expectHardenedPage(done, 'sign-out success');
  });

  it('sends HSTS only when the request came over https', async () => {
    const plain = await node.http.get('/api/tenant/ping', { tenant: 'acme' });
    expect(plain.headers['strict-transport-security']).toBeUndefined();
    const viaProxy = await node.http.get('/api/tenant/ping', {
      tenant: 'acme',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(viaProxy.headers['strict-transport-security']).toMatch(/max-age=31536000; includeSubDomains/);
    expect(viaProxy.headers['x-frame-options']).toBe('DENY');
  });
});
