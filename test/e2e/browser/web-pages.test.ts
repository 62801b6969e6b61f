import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { HTTPRequest, Page } from 'puppeteer-core';
import type { TestNode } from '../../support/node.js';
import { createUser } from '../../support/auth.js';
import { startRealmNode } from '../../support/realm.js';
import { expectCleanPage, openBrowser, type BrowserFixture } from '../../support/browser.js';

/**
 * The service's own sign-in callback and QR approval pages (decision 330) in a real headless chromium:
 * sign in on the realm's form, land on /auth/callback signed in; a polling device asks for a QR login,
 * the browser opens its approveUrl and approves (the device gets tokens) or refuses (a coded refusal).
 */
jest.setTimeout(240_000);

describe('first-party web pages in a browser', () => {
  let node: TestNode;
  let browser: BrowserFixture;
  let origin: string;

  beforeAll(async () => {
    ({ node } = await startRealmNode({ ROLES: 'http,idp' }));
    await createUser(node, 'acme', {
      username: 'dr.web',
      role: 'clinician',
      displayName: 'Dr Web',
      password: 'web-password-1',
    });
    origin = `http://acme.localhost:${new URL(node.url!).port}`;
    browser = await openBrowser({ pageTimeoutMs: 60_000 });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await node?.destroy();
  });

  /** Fills the realm's sign-in form the page was sent to and waits for the way back. */
  async function signInOnRealm(page: Page): Promise<void> {
    await page.waitForSelector('input[name=username]');
    expect(new URL(page.url()).pathname).toMatch(/^\/realms\/acme\/interaction\//);
    await page.type('input[name=username]', 'dr.web');
    await page.type('input[name=password]', 'web-password-1');
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  }

  /** A device asking for a QR login code, as a headset app does (no browser). */
  async function deviceAsksForCode(): Promise<{ code: string; pollSecret: string; approveUrl: string }> {
    const r = await node.http.get('/api/account/qrCode?deviceName=Ward%203%20headset', { tenant: 'acme' });
    expect(r.status).toBe(201);
    return r.body as { code: string; pollSecret: string; approveUrl: string };
  }

  /** The device's poll loop: polls until the answer is no longer `login_code_pending`. */
  async function pollUntilDecided(
    code: string,
    pollSecret: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    for (;;) {
      const r = await node.http.post('/api/account/login', {
        tenant: 'acme',
        body: { method: 'qr', code, pollSecret },
      });
      if (r.body?.code !== 'login_code_pending') return { status: r.status, body: r.body as Record<string, unknown> };
      await new Promise((done) => setTimeout(done, 200));
    }
  }

  it('/auth/callback starts the code flow with PKCE, the realm form signs in, the page shows the signed-in user', async () => {
    const { page, watch } = await browser.newPage();
    const res = await page.goto(`${origin}/auth/callback`, { waitUntil: 'load' });
    // The page itself; its script then sends the browser on to the realm's sign-in form.
    expect(res?.status()).toBe(200);
    await signInOnRealm(page);
    await page.waitForSelector('#signed-in:not([hidden])');
    expect(new URL(page.url()).pathname).toBe('/auth/callback');
    // The code is not left in the address bar once exchanged.
    expect(new URL(page.url()).searchParams.has('code')).toBe(false);
    expect(await page.$eval('#signed-in', (e) => e.textContent)).toContain('Dr Web');
    expect(await page.$eval('#signed-in', (e) => e.textContent)).toContain('dr.web');
    const audit = await node.services.auth.audit.list('acme', { action: 'signin.success' });
    expect(audit.some((a) => (a.details as { method?: string })?.method === 'oidc')).toBe(true);
    expectCleanPage(watch);
  });

  it('a code this tab did not ask for is not exchanged; returnTo never leaves the origin', async () => {
    const { page } = await browser.newPage();
    const logins: string[] = [];
    page.on('request', (r) => void (r.url().endsWith('/api/account/login') && logins.push(r.url())));
    await page.goto(`${origin}/auth/callback?code=forged-code&state=forged-state`, { waitUntil: 'load' });
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.$eval('#error', (e) => e.textContent)).toContain('sign_in_not_started');
    expect(logins).toEqual([]);
    await page.goto(`${origin}/auth/callback?returnTo=${encodeURIComponent('//evil.example/x')}`, {
      waitUntil: 'load',
    });
    await signInOnRealm(page);
    await page.waitForSelector('#signed-in:not([hidden])');
    expect(new URL(page.url()).origin).toBe(origin);

    // A signed-in tab sent to the callback with a returnTo that the URL parser normalizes into a
    // scheme-relative `//host` (dot segments, a backslash): the tab stays on the origin, signed in.
    const evil = `evil.localhost:${new URL(origin).port}`;
    for (const returnTo of [`/.//${evil}/x`, `/..//${evil}/x`, `/./\\${evil}/x`, `/%2e//${evil}/x`]) {
      const away: string[] = [];
      let wentAway = () => undefined as void;
      const left = new Promise<void>((resolve) => (wentAway = resolve));
      const seen = (r: HTTPRequest) => {
        if (!r.isNavigationRequest() || r.frame() !== page.mainFrame() || r.url().includes('/auth/callback')) return;
        away.push(r.url());
        wentAway();
      };
      page.on('request', seen);
      await page.goto(`${origin}/auth/callback?returnTo=${encodeURIComponent(returnTo)}`, { waitUntil: 'load' });
      await Promise.race([page.waitForSelector('#signed-in:not([hidden])'), left]);
      page.off('request', seen);
      expect({ returnTo, away }).toEqual({ returnTo, away: [] });
    }
  });

  it('approveUrl: the page names the requesting device, approving signs the polling device in as the approver', async () => {
    const device = await deviceAsksForCode();
    expect(device.approveUrl).toBe(`${origin}/login/approve?code=${device.code}`);
    const polled = pollUntilDecided(device.code, device.pollSecret);
    const { page, watch } = await browser.newPage();
    await page.goto(device.approveUrl, { waitUntil: 'load' });
    // Not signed in yet in this browser: the page signs in first and comes back.
    await signInOnRealm(page);
    await page.waitForSelector('#approve:not([disabled])');
    expect(new URL(page.url()).pathname).toBe('/login/approve');
    expect(new URL(page.url()).searchParams.get('code')).toBe(device.code);
    expect(await page.$eval('#device', (e) => e.textContent)).toContain('Ward 3 headset');
    expect(await page.$eval('#who', (e) => e.textContent)).toContain('Dr Web');
    await page.click('#approve');
    await page.waitForSelector('#outcome.approved:not([hidden])');
    const done = await polled;
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ tokenType: 'Bearer', user: { username: 'dr.web' } });
    expectCleanPage(watch);
  });

  it('refusing on the page gives the polling device the coded refusal login_code_refused', async () => {
    const { page, watch } = await browser.newPage();
    // Signed in on the callback page first, then the approval needs no second sign-in.
    await page.goto(`${origin}/auth/callback`, { waitUntil: 'load' });
    await signInOnRealm(page);
    await page.waitForSelector('#signed-in:not([hidden])');
    const device = await deviceAsksForCode();
    const polled = pollUntilDecided(device.code, device.pollSecret);
    await page.goto(device.approveUrl, { waitUntil: 'load' });
    await page.waitForSelector('#refuse:not([disabled])');
    await page.click('#refuse');
    await page.waitForSelector('#outcome.refused:not([hidden])');
    const done = await polled;
    expect(done.status).toBe(403);
    expect(done.body).toMatchObject({ code: 'login_code_refused' });
    // A refused code cannot be approved afterwards either.
    await page.goto(device.approveUrl, { waitUntil: 'load' });
    await page.waitForSelector('#outcome.refused:not([hidden])');
    expectCleanPage(watch);
  });
});
