/**
 * Permissions and the built-in roles that grant them. Tenant admins may define further roles from
 * these permissions; the authorizer (src/auth/authorizer.ts) derives a principal's permissions from its role.
 */
export const PERMISSIONS = [
  'profile:read', // me, hasPin, own contact card
  'profile:write', // update own contact info, own PIN
  'contacts:read',
  'groups:manage',
  'notices:read',
  'notices:manage',
  'events:read',
  'events:write',
  'events:cancel',
  'meetings:join',
  'meetings:host', // init events, notify, share images, host access
  'meetings:record',
  'calls:make',
  'media:upload',
  'media:read',
  'peripherals:read',
  'devices:register',
  'devices:control', // remote control, start/stop peripherals
  'devices:report', // heartbeats from headsets
  'presence:read', // admin lastSeen / isOnline / user info
  'users:import',
  'users:manage', // reset other users' PINs, assign roles
  'tenant:read',
  'tenant:admin', // tenant config, private server config
  'account:impersonate',
  'account:offline',
  'audit:read', // read, verify and export the tenant's audit trail
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const everyone: Permission[] = [
  'profile:read',
  'profile:write',
  'contacts:read',
  'notices:read',
  'tenant:read',
  'account:offline',
];

export const BUILTIN_ROLES: Readonly<Record<string, { description: string; permissions: readonly Permission[] }>> = {
  admin: { description: 'Tenant administrator', permissions: PERMISSIONS },
  clinician: {
    description: 'Clinician: schedules and hosts consultations',
    permissions: [
      ...everyone,
      'groups:manage',
      'events:read',
      'events:write',
      'events:cancel',
      'meetings:join',
      'meetings:host',
      'meetings:record',
      'calls:make',
      'media:upload',
      'media:read',
      'peripherals:read',
      'devices:register',
      'devices:control',
    ],
  },
  patient: {
    description: 'Patient: joins consultations and calls',
    permissions: [...everyone, 'events:read', 'meetings:join', 'calls:make', 'media:upload', 'media:read'],
  },
  device: {
    description: 'Headset or other device service account',
    permissions: [
      'profile:read',
      'tenant:read',
      'notices:read',
      'contacts:read',
      'meetings:join',
      'media:upload',
      'media:read',
      'peripherals:read',
      'devices:register',
      'devices:report',
    ],
  },
  support: {
    description: 'Support staff: impersonation and presence look-ups',
    permissions: [...everyone, 'presence:read', 'account:impersonate', 'events:read', 'media:read'],
  },
  guest: {
    description: 'Guest who joined by code',
    permissions: ['profile:read', 'tenant:read', 'meetings:join', 'media:read'],
  },
};

export function isPermission(p: string): p is Permission {
  return (PERMISSIONS as readonly string[]).includes(p);
}
