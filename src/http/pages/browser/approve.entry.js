// /login/approve?code=...: the page a QR login code points at. Shows which device asks to sign in and
// lets the signed-in user approve (the device is signed in as them) or refuse; signs in first when needed.
import { accessToken, api, loadSession, setText, showError } from './session.js';

const code = new URLSearchParams(location.search).get('code') ?? '';
const OUTCOME = {
  approved: 'Approved: the device is signing in.',
  redeemed: 'This code has already been used to sign in.',
  refused: 'Refused: the device will not be signed in.',
  expired: 'This code has expired. Ask the device for a new one.',
};

function outcome(status) {
  const el = setText('outcome', OUTCOME[status] ?? status);
  el.className = status;
  el.hidden = false;
  for (const id of ['approve', 'refuse']) document.getElementById(id).disabled = true;
}

async function decide(action) {
  for (const id of ['approve', 'refuse']) document.getElementById(id).disabled = true;
  const token = await accessToken();
  if (!token) return signIn();
  const done = await api('POST', `/api/account/${action}LoginCode`, { token, body: { code } });
  outcome(done.status);
}

function signIn() {
  location.assign(`/auth/callback?returnTo=${encodeURIComponent(location.pathname + location.search)}`);
}

async function main() {
  if (!code) throw Object.assign(new Error('The address has no login code'), { code: 'login_code_not_found' });
  const token = await accessToken();
  if (!token) return signIn();
  const info = await api('GET', `/api/account/loginCode?code=${encodeURIComponent(code)}`, { token });
  const from = [info.requestedFrom?.userAgent, info.requestedFrom?.ip && `from ${info.requestedFrom.ip}`]
    .filter(Boolean)
    .join(' ');
  setText('device', `${info.deviceName ?? 'A device'}${from ? ` (${from})` : ''} asks to sign in.`);
  const user = loadSession()?.user;
  setText(
    'who',
    `It will be signed in as ${user?.displayName ?? 'you'}${user?.username ? ` (${user.username})` : ''}.`,
  );
  setText('status', '');
  document.getElementById('request').hidden = false;
  if (info.status !== 'pending') return outcome(info.status);
  const handle = (action) => () =>
    decide(action).catch((e) => {
      if (['login_code_refused', 'login_code_used', 'login_code_expired'].includes(e.code))
        return outcome(
          { login_code_refused: 'refused', login_code_used: 'redeemed', login_code_expired: 'expired' }[e.code],
        );
      showError(e);
    });
  document.getElementById('approve').addEventListener('click', handle('approve'));
  document.getElementById('refuse').addEventListener('click', handle('refuse'));
  for (const id of ['approve', 'refuse']) document.getElementById(id).disabled = false;
}

main().catch((e) => {
  setText('status', '');
  showError(e);
});
