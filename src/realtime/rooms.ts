/**
 * Every Socket.IO room name, built here and nowhere else. Each name carries the tenant, so a push for
 * one tenant can never reach another tenant's sockets even when ids collide. Actors, the hub and the
 * telemetry completion all address clients through these functions.
 */
export const rooms = {
  /** Every socket of a tenant (a role change finds the sockets of its user and impersonators here). */
  tenant: (tenant: string) => `tenant:${tenant}`,
  /**
   * The sockets that see the presence of everyone in the tenant: staff, and patients whose tenant lets them
   * see the whole directory. Tenant-wide presence pushes go here (decision 1143).
   */
  tenantPresence: (tenant: string) => `tenant-presence:${tenant}`,
  /**
   * The patients' sockets of a tenant whose directory is their care team. Nodes of the previous release push
   * presence to the tenant room except this one, so these sockets keep joining it while such nodes may run.
   */
  tenantPatients: (tenant: string) => `tenant-patients:${tenant}`,
  /** Sockets of patients whose care team includes the user: they receive that user's presence. */
  presenceOf: (tenant: string, userId: string) => `presence:${tenant}:${userId}`,
  /** Every socket (all devices) of one user. */
  user: (tenant: string, userId: string) => `user:${tenant}:${userId}`,
  /** Every socket that joined an event's meeting (people and headsets). */
  meeting: (tenant: string, eventId: string) => `meeting:${tenant}:${eventId}`,
  /** Only the headsets of an event's meeting (shareImage / clearImage). */
  meetingDevices: (tenant: string, eventId: string) => `meeting-devices:${tenant}:${eventId}`,
  /** The sockets of one headset/device. */
  device: (tenant: string, deviceId: string) => `device:${tenant}:${deviceId}`,
  /** The sockets opened with identity-provider tokens of one realm session (`sid`). */
  realmSession: (tenant: string, sid: string) => `realm-session:${tenant}:${sid}`,
  /** A free-form room of joinRoom / sayHiToRoom. */
  custom: (tenant: string, roomId: string) => `room:${tenant}:${roomId}`,
} as const;

export type RoomNames = typeof rooms;

/**
 * The recipient streams of push histories (src/realtime/push-history.ts): a user (`u:<userId>`) and a
 * device (`d:<deviceId>`), each delivered to through its room.
 */
export const streams = {
  user: (userId: string) => `u:${userId}`,
  device: (deviceId: string) => `d:${deviceId}`,
  /** The room a stream's pushes are delivered to. */
  room: (tenant: string, stream: string): string | undefined =>
    stream.startsWith('u:')
      ? rooms.user(tenant, stream.slice(2))
      : stream.startsWith('d:')
        ? rooms.device(tenant, stream.slice(2))
        : undefined,
} as const;

/** What a room name addresses, for the push history: a recipient's stream, a meeting roster, or neither. */
export function roomTarget(
  room: string,
): { tenant: string; stream: string } | { tenant: string; roster: string } | undefined {
  const m = /^(user|device|meeting|meeting-devices):([^:]+):(.+)$/.exec(room);
  if (!m) return undefined;
  const [, kind, tenant, id] = m as unknown as [string, string, string, string];
  if (kind === 'user') return { tenant, stream: streams.user(id) };
  if (kind === 'device') return { tenant, stream: streams.device(id) };
  return { tenant, roster: room };
}
