import * as oidc from 'openid-client';
import type { components, paths } from './generated/openapi.js';
import { isConsultError } from './errors.js';
import { body, type RestClient } from './rest.js';

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

/** What every sign-in answers: tokens, their expiry and the user (LoginResponse). */
export type LoginResponse = Json<'/api/account/login', 'post', 200>;
/** A QR login code to show (GenerateQRCodeCommand's answer). */
export type QrLoginCode = Json<'/api/account/qrCode', 'get', 201>;
/** What a signed-in user is shown before deciding on a QR login code (LoginCodeInfo; never the poll secret). */
export type QrLoginCodeInfo = Json<'/api/account/loginCode', 'get', 200>;
/** The answer to a refusal (RefusedLoginCode). */
export type RefusedQrLogin = Json<'/api/account/refuseLoginCode', 'post', 200>;
export type OfflineToken = Json<'/api/account/offlineToken', 'post', 201>;
export type { components };

/** Device PIN sign-in (meeting join, quick unlock). */
export function signInWithPin(api: RestClient, username: string, pin: string): Promise<LoginResponse> {
  return body(api.POST('/api/account/login', { body: { method: 'pin', username, pin } }));
}

/** Step 1 of QR login: a code the app shows as a QR image (`qrCode`, a PNG data URL) for a signed-in web user to approve. */
export function createQrLogin(api: RestClient, deviceName?: string): Promise<QrLoginCode> {
  return body(api.GET('/api/account/qrCode', { params: { query: deviceName ? { deviceName } : {} } }));
}

/**
 * Step 2 of QR login: polls until a web user approved the code, then redeems it once for a session.
 * Waits the server's interval (Retry-After) between polls; rejects on any other refusal (expired,
 * used, unknown) or when `signal` aborts.
 */
export async function pollQrLogin(
  api: RestClient,
  qr: Pick<QrLoginCode, 'code' | 'pollSecret' | 'pollIntervalSeconds'>,
  opts: { signal?: AbortSignal; intervalMs?: number } = {},
): Promise<LoginResponse> {
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      return await body(
        api.POST('/api/account/login', { body: { method: 'qr', code: qr.code, pollSecret: qr.pollSecret } }),
      );
    } catch (e) {
      if (!isConsultError(e, 'login_code_pending')) throw e;
      const wait = opts.intervalMs ?? (e.retryAfter ?? qr.pollIntervalSeconds) * 1000;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** A signed-in web user approves a QR login code shown by a device. */
export async function approveQrLogin(api: RestClient, code: string): Promise<void> {
  await api.POST('/api/account/approveLoginCode', { body: { code } });
}

/**
 * Before approving or refusing: which device asks to sign in with a QR login code (its name, address
 * and User-Agent), when, and the code's state (`pending` until decided; `refused`, `redeemed`, `expired`).
 * Any signed-in user holding the code may look; `login_code_not_found` when there is no such code.
 */
export function getQrLoginCode(api: RestClient, code: string): Promise<QrLoginCodeInfo> {
  return body(api.GET('/api/account/loginCode', { params: { query: { code } } }));
}

/**
 * A signed-in web user refuses a QR login code shown by a device: final, the device's `pollQrLogin`
 * then rejects with `login_code_refused` (403) and the code can no longer be approved.
 */
export function refuseQrLogin(api: RestClient, code: string): Promise<RefusedQrLogin> {
  return body(api.POST('/api/account/refuseLoginCode', { body: { code } }));
}

/** Issues an offline token for a stated purpose (keep it safe: it signs in without the network's identity provider). */
export function issueOfflineToken(api: RestClient, purpose: string): Promise<OfflineToken> {
  return body(api.POST('/api/account/offlineToken', { params: { query: { purpose } } }));
}

/** Signs in with an offline token (limited permissions of its purpose). */
export function signInOffline(api: RestClient, token: string): Promise<LoginResponse> {
  return body(api.POST('/api/account/offlineLogin', { body: { token } }));
}

/** Renews the session with its refresh token (rotated: use the new one next time). */
export function refreshSession(
  api: RestClient,
  refreshToken: string,
): Promise<Json<'/api/account/refresh', 'post', 200>> {
  return body(api.POST('/api/account/refresh', { body: { refreshToken } }));
}

export interface CodeSignInStart {
  /** Where to send the browser (the realm's sign-in page). */
  url: URL;
  /** Keep until the browser comes back; never send it anywhere else. */
  codeVerifier: string;
  state: string;
}

/**
 * Step 1 of the web sign-in (authorization code flow with PKCE, openid-client): the realm's address
 * to send the browser to. `issuer` is the tenant's realm (the tenant's configuration names it).
 */
export async function beginCodeSignIn(opts: {
  issuer: string;
  clientId: string;
  redirectUri: string;
  scope?: string;
  allowHttp?: boolean;
}): Promise<CodeSignInStart> {
  const config = await oidc.discovery(
    new URL(opts.issuer),
    opts.clientId,
    undefined,
    undefined,
    opts.allowHttp ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: opts.redirectUri,
    scope: opts.scope ?? 'openid',
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { url, codeVerifier, state };
}

/** Step 2: the service exchanges the code the browser came back with (at `callbackUrl`) for a session. */
export function completeCodeSignIn(
  api: RestClient,
  start: Pick<CodeSignInStart, 'codeVerifier' | 'state'>,
  callbackUrl: string,
): Promise<LoginResponse> {
  return body(
    api.POST('/api/account/login', {
      body: { method: 'code', callbackUrl, codeVerifier: start.codeVerifier, state: start.state },
    }),
  );
}
