import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares secrets (join codes, keys) in constant time; hashing first so lengths never leak. */
export function secretEquals(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
