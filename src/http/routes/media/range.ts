import type { ByteRange } from '../../../storage/object-store.js';

/**
 * Resolves a Range header against an object's size (RFC 9110 14.2): `undefined` means serve the whole
 * object (no header, a syntax the server ignores, or several ranges), `'unsatisfiable'` means 416.
 */
export function resolveRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** True when an If-None-Match header matches the entity tag (weak comparison, as for GET). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '').replace(/"/g, '') === etag);
}
