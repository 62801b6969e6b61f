import { z } from 'zod';

/** Ids of users, events and devices as clients send them: opaque, bounded, no control characters. */
export const Id = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:@-]+$/, 'must be an identifier');
/** A MongoDB ObjectId in its 24-hex form (users, events). */
export const ObjectIdString = z.string().regex(/^[a-f0-9]{24}$/i, 'must be a 24-character hex id');
