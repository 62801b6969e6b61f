import { randomBytes } from 'node:crypto';

/**
 * This process's prefix of minted ask ids: 16 random bytes (128 bits, more than a v4 UUID's 122), so
 * no two processes share one; `mintAskId()` counts up under it.
 */
const prefix = `${randomBytes(16).toString('base64url')}.`;
let next = 0;

/**
 * A new ask's de-duplication id, unique across every node and restart: this process's random prefix and
 * a counter (28-30 characters, against a UUID's 36, in every envelope and remembered-reply key), for
 * a string concatenation instead of a UUID's random bytes and formatting on each ask.
 */
export function mintAskId(): string {
  return prefix + (next++).toString(36);
}
