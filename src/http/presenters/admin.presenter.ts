import { z } from 'zod';
import type { Connectivity } from '../../core/tenants/admin.service.js';
import { IsoDate, iso } from './common.presenter.js';

export const LastSeen = z.object({
  userId: z.string(),
  username: z.string(),
  online: z.boolean(),
  lastSeenAt: IsoDate.nullable(),
});
export const IsOnline = z.object({ userId: z.string(), username: z.string(), online: z.boolean() });
export const UserConnectivity = LastSeen.extend({
  connections: z.number().int().describe('Sockets open across hub nodes'),
  displayName: z.string(),
  kind: z.enum(['person', 'device']),
  role: z.string(),
  status: z.enum(['active', 'pending', 'disabled']),
});

export function presentLastSeen(c: Connectivity): z.infer<typeof LastSeen> {
  return { userId: String(c.user._id), username: c.user.username, online: c.online, lastSeenAt: iso(c.lastSeenAt) };
}

export function presentIsOnline(c: Connectivity): z.infer<typeof IsOnline> {
  return { userId: String(c.user._id), username: c.user.username, online: c.online };
}

export function presentUserConnectivity(c: Connectivity): z.infer<typeof UserConnectivity> {
  const u = c.user;
  return {
    ...presentLastSeen(c),
    connections: c.connections,
    displayName: u.displayName,
    kind: u.kind as 'person' | 'device',
    role: u.role,
    status: u.status as 'active' | 'pending' | 'disabled',
  };
}
