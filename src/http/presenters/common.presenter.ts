import { z } from 'zod';
import type { Page } from '../../kernel/paging.js';

/** A page of results as every listing returns it (the take actually used is echoed). */
export function PageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), total: z.number().int(), skip: z.number().int(), take: z.number().int() });
}

export function presentPage<T, U>(
  page: Page<T>,
  present: (t: T) => U,
): { items: U[]; total: number; skip: number; take: number } {
  return { items: page.items.map(present), total: page.total, skip: page.skip, take: page.take };
}

export const IsoDate = z.string().describe('ISO 8601 date-time');

export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
