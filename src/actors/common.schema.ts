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

/** Who a turn acts for: taken from the socket's verified principal, never from the payload. */
export const Caller = z.object({
  userId: z.string(),
  username: z.string(),
  role: z.string(),
  permissions: z.array(z.string()),
  scheme: z.enum(['internal', 'idp']).optional(),
  sessionId: z.string().optional(),
  /** The impersonator, while impersonating: the audit trail names both (docs/audit.md). */
  actorUserId: z.string().optional(),
});
export type Caller = z.infer<typeof Caller>;
