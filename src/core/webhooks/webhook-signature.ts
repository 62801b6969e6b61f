import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Whether a caller-chosen secret has the Standard Webhooks form and enough key material (24 to 64 bytes). */
export function validSigningSecret(s: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s)) return false;
  const len = Buffer.from(s.slice(6), 'base64').length;
  return len >= 24 && len <= 64;
}

/**
 * The Standard Webhooks headers of one delivery attempt: `webhook-id` (the event's stable id),
 * `webhook-timestamp` (seconds, this attempt) and `webhook-signature`, one `v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>` per valid secret, space-separated, so a receiver holding either secret of a
 * rotation verifies. The reference library signs (decision 891), not code of ours.
 */
export function signedHeaders(
  id: string,
  at: Date,
  body: string,
  secrets: readonly string[],
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}
