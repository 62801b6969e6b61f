import { z } from 'zod';

/** Ids on the wire are 24 hex digits (MongoDB ObjectIds), validated before any query. */
export const Id = z.string().regex(/^[a-f0-9]{24}$/i, 'must be a 24-hex-digit id');

/**
 * skip/take paging. `take` above the configured maximum (PAGE_MAX_TAKE, default 100) is clamped,
 * not refused, and the page echoes the take it used (docs/decisions/003-paging.md).
 */
export const Paging = z.object({
  skip: z.coerce.number().int().min(0).max(1_000_000).default(0),
  take: z.coerce.number().int().min(1).default(20),
});
export type Paging = z.infer<typeof Paging>;

export interface Page<T> {
  items: T[];
  total: number;
  skip: number;
  take: number;
}

export function clampTake(p: Paging, max: number): Paging {
  return { skip: p.skip, take: Math.min(p.take, max) };
}
