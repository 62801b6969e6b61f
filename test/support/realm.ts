import * as oidc from 'openid-client';
import type { NodeHandle } from '../../src/composition/node.js';
import { request, type HttpResult } from './http.js';
import { freePort } from './net.js';
import { startTestNode, type TestNode } from './node.js';

/** A browser stand-in: follows the embedded realm's redirects by hand, keeping its cookies. */
export class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}

  async go(method: string, pathOrUrl: string, form?: Record<string, string>): Promise<HttpResult> {
    const url = new URL(pathOrUrl, this.base);
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    let rawBody: string | undefined;
    if (form) {
      rawBody = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const r = await request(this.base, method, url.pathname + url.search, { host: url.host, headers, rawBody });
    for (const c of ([] as string[]).concat(r.headers['set-cookie'] ?? [])) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return r;
  }
}

export interface RealmAuthorization {
  /** The redirect the browser landed on (code, state, iss), or undefined when the realm asked for a password. */
  callbackUrl?: string;
  codeVerifier: string;
  state: string;
}

/**
 * Starts an authorization (code + PKCE) in `browser` and follows the realm's redirects. With a password
 * it signs in on the login form; without one it only succeeds if the browser's realm session cookie
 * still signs the user in (`callbackUrl` is then set; a login form leaves it undefined).
 */
export async function authorizeIn(
  node: NodeHandle,
  browser: Browser,
  tenant: string,
  redirectUri: string,
  opts: { username?: string; password?: string; scope?: string; prompt?: string } = {},
): Promise<RealmAuthorization> {
  const config = await node.services.auth.realms.configuration(tenant);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const authUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: opts.scope ?? 'openid profile email api',
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    ...(opts.prompt ? { prompt: opts.prompt } : {}),
  });
  const callbackUrl = await followAuthorization(browser, authUrl.href, redirectUri, opts);
  return { ...(callbackUrl ? { callbackUrl } : {}), codeVerifier, state };
}

/**
 * Follows an authorization URL in `browser` through the realm's redirects, signing in on its form when a
 * password is given; the redirect URI it lands on, or undefined when the realm asked for a password.
 */
export async function followAuthorization(
  browser: Browser,
  authUrl: string,
  redirectUri: string,
  opts: { username?: string; password?: string } = {},
): Promise<string | undefined> {
  let location: string | undefined = authUrl;
  for (let hop = 0; hop < 8 && location && !location.startsWith(redirectUri); hop++) {
    const r = await browser.go('GET', location);
    if (r.status === 200 && /<form method="post"/.test(r.text)) {
      if (!opts.password) return undefined;
      const action = /action="([^"]+)"/.exec(r.text)![1]!;
      const posted = await browser.go('POST', action, { username: opts.username!, password: opts.password });
      if (posted.status !== 303) throw new Error(`realm login failed: ${posted.status}`);
      location = posted.headers.location;
      continue;
    }
    if (r.status !== 303 && r.status !== 302) throw new Error(`realm answered ${r.status}: ${r.text.slice(0, 200)}`);
    location = r.headers.location;
  }
  if (!location?.startsWith(redirectUri)) throw new Error(`authorization did not reach the redirect URI (${location})`);
  return new URL(location).href;
}

/**
 * A node serving the embedded realm on a fixed port, so its issuer (PUBLIC_URL) is where clients reach it:
 * the node, its base URL and the realm client's registered redirect URI.
 */
export async function startRealmNode(
  env: Record<string, string>,
): Promise<{ node: TestNode; base: string; redirectUri: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const node = await startTestNode({ ...env, PORT: String(port), PUBLIC_URL: base });
  return { node, base, redirectUri: `${base}/auth/callback` };
}
