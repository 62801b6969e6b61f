// /auth/callback: starts the authorization-code flow with PKCE at the tenant's realm (no `code` in the
// address), completes it when the realm sends the browser back (the service, the realm's confidential
// client, exchanges the code), then shows who is signed in or returns to the page that asked.
import * as oauth from 'oauth4webapi';
import {
  accessToken,
  api,
  clearSession,
  loadSession,
  safeReturnPath,
  saveSession,
  setText,
  showError,
} from './session.js';

const FLOW = 'consult.signin.flow';
const cfg = JSON.parse(document.getElementById('app').dataset.config);
const as = {
  issuer: cfg.issuer,
  authorization_endpoint: cfg.authorizationEndpoint,
  authorization_response_iss_parameter_supported: cfg.issParameterSupported,
};
const client = { client_id: cfg.clientId };
const redirectUri = `${location.origin}/auth/callback`;

async function start(returnTo) {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem(FLOW, JSON.stringify({ codeVerifier, state, returnTo }));
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', cfg.scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  setText('status', 'Signing in…');
  location.assign(url.href);
}

async function complete(params) {
  const flow = JSON.parse(sessionStorage.getItem(FLOW) ?? 'null');
  sessionStorage.removeItem(FLOW);
  const callbackUrl = location.href;
  // The code must not stay in the address bar or the history.
  history.replaceState(null, '', '/auth/callback');
  if (!flow)
    throw Object.assign(new Error('This sign-in was not started in this tab'), { code: 'sign_in_not_started' });
  try {
    oauth.validateAuthResponse(as, client, params, flow.state);
  } catch (e) {
    // AuthorizationResponseError carries the realm's `error` (e.g. access_denied) and its description.
    throw Object.assign(new Error(e.error_description ?? e.message), { code: e.error ?? e.code });
  }
  setText('status', 'Completing sign-in…');
  saveSession(
    await api('POST', '/api/account/login', {
      body: { method: 'code', callbackUrl, codeVerifier: flow.codeVerifier, state: flow.state },
    }),
  );
  return flow.returnTo;
}

async function showSignedIn() {
  const token = await accessToken();
  if (!token) return start(null);
  const res = await api('POST', '/graphql', { token, body: { query: '{ me { username displayName role tenant } }' } });
  if (res.errors?.length)
    throw Object.assign(new Error(res.errors[0].message), { code: res.errors[0].extensions?.code });
  const { me } = res.data;
  setText('status', '');
  const el = setText('signed-in', `Signed in as ${me.displayName} (${me.username}, ${me.role}) at ${me.tenant}`);
  el.hidden = false;
  document.getElementById('sign-out').hidden = false;
}

async function signOut() {
  const s = loadSession();
  const token = await accessToken();
  if (s && token)
    await api('POST', `/api/account/${encodeURIComponent(s.user.id)}/logout`, { token }).catch(() => undefined);
  clearSession();
  document.getElementById('signed-in').hidden = true;
  document.getElementById('sign-out').hidden = true;
  setText('status', 'Signed out.');
}

async function main() {
  document.getElementById('sign-out').addEventListener('click', () => signOut().catch(showError));
  const params = new URLSearchParams(location.search);
  if (params.has('code') || params.has('error')) {
    const returnTo = safeReturnPath(await complete(params));
    if (returnTo) return location.replace(returnTo);
    return showSignedIn();
  }
  const returnTo = safeReturnPath(params.get('returnTo'));
  if (await accessToken()) return returnTo ? location.replace(returnTo) : showSignedIn();
  return start(returnTo);
}

main().catch((e) => {
  setText('status', 'Sign-in failed.');
  showError(e);
});
