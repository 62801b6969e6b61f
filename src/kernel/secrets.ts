import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** URL-safe random secret with `bytes` of entropy. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 of a high-entropy secret (refresh tokens, offline tokens, poll secrets): fast is fine there. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Compares secrets (join codes, keys, bearer tokens) in constant time; hashing first so lengths never leak. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

function scryptAsync(secret: string, salt: Buffer, len: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * Slow hash for low-entropy secrets (PINs, passwords): scrypt with a random salt, encoded with its
 * parameters so they can be raised later without invalidating stored hashes.
 */
export async function slowHash(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * Checks `secret` against a slowHash encoding. `onScrypt` is told each time scrypt actually runs (the
 * metric that shows unknown accounts cost the same work as known ones).
 */
export async function slowVerify(
  secret: string,
  encoded: string | undefined | null,
  onScrypt?: () => void,
): Promise<boolean> {
  const parts = encoded?.split('$');
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(key, 'base64url');
  onScrypt?.();
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;

/**
 * A stored hash of a secret nobody knows: unknown accounts and accounts without the secret are checked
 * against it, so they cost the same scrypt work as a wrong secret and their timing tells nothing.
 */
export function decoyHash(): Promise<string> {
  return (decoy ??= slowHash(randomSecret()));
}
