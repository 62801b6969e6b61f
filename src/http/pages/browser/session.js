// The signed-in session of the service's own web pages (decision 330): the LoginResponse of the code
// exchange, kept in this tab's sessionStorage on the tenant's origin, refreshed with its single-use
// refresh token shortly before the access token expires.
const SESSION = 'consult.session';
const SKEW_MS = 30_000;

export function loadSession() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION) ?? 'null');
  } catch {
    return null;
  }
}

export function saveSession(s) {
  sessionStorage.setItem(SESSION, JSON.stringify(s));
}

export function clearSession() {
  sessionStorage.removeItem(SESSION);
}

/** A problem+json answer as an Error carrying its `code` (one of the service's error codes). */
export async function problem(res) {
  let body = {};
  try {
    body = await res.json();
  } catch {
    // not a problem document
  }
  const err = new Error(body.detail ?? body.title ?? `HTTP ${res.status}`);
  err.code = body.code ?? `http_${res.status}`;
  err.status = res.status;
  return err;
}

/** A JSON call of the service's API on this origin; the answer's JSON, or a coded Error. */
export async function api(method, path, { body, token } = {}) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw await problem(res);
  return res.status === 204 ? null : res.json();
}

/** A valid access token of the stored session (refreshed when close to expiry), or null when signed out. */
export async function accessToken() {
  const s = loadSession();
  if (!s) return null;
  if (Date.parse(s.expiresAt) - SKEW_MS > Date.now()) return s.accessToken;
  try {
    const meta = await api('POST', '/api/account/refresh', { body: { refreshToken: s.refreshToken } });
    saveSession({ ...s, ...meta });
    return meta.accessToken;
  } catch {
    clearSession();
    return null;
  }
}

/**
 * A URL of this origin to come back to after sign-in (a path, or an absolute URL of this origin as this
 * function returns it), as an absolute URL; anything else (another origin, `//host`) is dropped. Never the
 * bare path: the parser normalizes `/.//host`, `/..//host`, `/./\\host` or `/%2e//host` into the path
 * `//host`, which as a location is scheme-relative.
 */
export function safeReturnPath(value) {
  if (typeof value !== 'string') return null;
  const path = value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\');
  if (!path && !value.startsWith(`${location.origin}/`)) return null;
  let url;
  try {
    url = new URL(value, location.origin);
  } catch {
    return null;
  }
  return url.origin === location.origin && !url.pathname.startsWith('//') ? url.href : null;
}

/** Replaces the element's text (never HTML: names and device strings come from users and devices). */
export function setText(id, text) {
  const el = document.getElementById(id);
  if (el) el.textContent = text;
  return el;
}

export function showError(err) {
  const el = setText('error', `${err.message}${err.code ? ` (${err.code})` : ''}`);
  if (el) el.hidden = false;
}
