import { z } from 'zod';
import type { ContactView } from '../../core/directory/contact.service.js';
import { IsoDate, iso } from './common.presenter.js';

/** ContactSummary: one row of a contact list, merged with presence. */
export const ContactSummary = z.object({
  id: z.string(),
  username: z.string(),
  displayName: z.string(),
  initial: z.string(),
  kind: z.enum(['person', 'device']),
  title: z.string().nullable(),
  department: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  online: z.boolean(),
  favourite: z.boolean(),
});
export type ContactSummary = z.infer<typeof ContactSummary>;

/** ContactInfo: a full contact card (own card and look-ups). */
export const ContactInfo = ContactSummary.extend({
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  role: z.string(),
  lastSeenAt: IsoDate.nullable(),
});
export type ContactInfo = z.infer<typeof ContactInfo>;

/** Avatars are served from the tenant's `assets` container by the files endpoint. */
export function avatarUrl(tenant: string, hash: string | null | undefined): string | null {
  return hash ? `/files/${tenant}/assets/avatars/${hash}` : null;
}

export function presentContactSummary(tenant: string, v: ContactView): ContactSummary {
  const u = v.user;
  return {
    id: String(u._id),
    username: u.username,
    displayName: u.displayName,
    initial: u.initial,
    kind: u.kind as ContactSummary['kind'],
    title: u.title ?? null,
    department: u.department ?? null,
    avatarUrl: avatarUrl(tenant, u.avatarHash),
    online: v.online,
    favourite: v.favourite,
  };
}

export function presentContactInfo(tenant: string, v: ContactView & { lastSeenAt?: Date | null }): ContactInfo {
  const u = v.user;
  return {
    ...presentContactSummary(tenant, v),
    firstName: u.firstName ?? null,
    lastName: u.lastName ?? null,
    email: u.email ?? null,
    phone: u.phone ?? null,
    role: u.role,
    lastSeenAt: iso(v.lastSeenAt ?? u.lastSeenAt),
  };
}
