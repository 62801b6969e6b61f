import { UserDirectorySearch } from '../data/search/user-search.js';
import type { AuditService } from '../core/audit/audit.service.js';
import { MediaFileRepository } from '../data/repositories/media-file.repository.js';
import type { Infra } from '../app/index.js';
import type { VideoConferencing } from '../vcs/vcs.port.js';
import { UserRepository } from '../data/repositories/user.repository.js';
import { FavouriteRepository } from '../data/repositories/favourite.repository.js';
import { CallRecordRepository } from '../data/repositories/call-record.repository.js';
import { EventRepository } from '../data/repositories/event.repository.js';
import { GroupRepository } from '../data/repositories/group.repository.js';
import { NoticeRepository } from '../data/repositories/notice.repository.js';
import { PeripheralRepository } from '../data/repositories/peripheral.repository.js';
import { DeviceRepository } from '../data/repositories/device.repository.js';
import { TenantConfigRepository } from '../data/repositories/tenant-config.repository.js';
import { AppError } from '../kernel/errors.js';
import { PresenceService, type LastSeenStore } from '../core/directory/presence.service.js';
import { PresenceStore } from '../data/stores/presence.store.js';
import { ContactService } from '../core/directory/contact.service.js';
import { ContactDirectory } from '../data/search/contact-directory.js';
import { DirectoryChangesStore } from '../data/stores/directory-changes.store.js';
import { CareTeamStore } from '../data/stores/care-team.store.js';
import { GroupService } from '../core/directory/group.service.js';
import { NoticeService } from '../core/directory/notice.service.js';
import { EventService } from '../core/meetings/event.service.js';
import { MeetingService } from '../core/meetings/meeting.service.js';
import { CallService } from '../core/meetings/call.service.js';
import { PeripheralService } from '../core/meetings/peripheral.service.js';
import { AdminService } from '../core/tenants/admin.service.js';
import { MediaAccess } from '../core/media/media-access.js';
import { DirectoryScope } from '../core/directory/directory-scope.js';
import { WebAppUrls } from '../core/tenants/web-app-urls.js';
import type { AnnounceHook } from '../core/webhooks/webhook-events.js';
import { DeviceRegistrationService } from '../core/directory/device-registration.service.js';
import { DeviceRegistrationRepository } from '../data/repositories/device-registration.repository.js';

/** Repository factories per tenant: a tenant's database is only reached through its name. */
function tenantRepos(infra: Infra) {
  const db = (t: string) => infra.mongo.tenantDb(t);
  return {
    users: (t: string) => new UserRepository(db(t)),
    favourites: (t: string) => new FavouriteRepository(db(t)),
    calls: (t: string) => new CallRecordRepository(db(t)),
    events: (t: string) => new EventRepository(db(t)),
    groups: (t: string) => new GroupRepository(db(t)),
    notices: (t: string) => new NoticeRepository(db(t)),
    peripherals: (t: string) => new PeripheralRepository(db(t)),
    devices: (t: string) => new DeviceRepository(db(t)),
    settings: (t: string) => new TenantConfigRepository(db(t)),
  };
}

/**
 * The in-memory contact directory when configured (auto: where the server cannot search by index), with
 * every user write of this process noting its change for all nodes (decision 212).
 */
function contactDirectory(infra: Infra, users: (t: string) => UserRepository): ContactDirectory | undefined {
  const c = infra.config.contactDirectory;
  const server = infra.mongo.server;
  if (c.memory === 'off' || (c.memory === 'auto' && server.indexedSearch)) return undefined;
  const directory = new ContactDirectory({
    changes: new DirectoryChangesStore({ redis: infra.redis, keys: infra.keys }),
    users,
    order: server.stringOrder,
    logger: infra.logger,
    maxTenants: c.maxTenants,
    maxEntries: c.maxEntries,
    rebuildMs: c.rebuildSeconds * 1000,
  });
  infra.mongo.onUsersChanged((tenant, ids) => directory.recordChange(tenant, ids));
  return directory;
}

/**
 * Wires the directory, scheduling and tenant-administration services (presence, contacts, groups,
 * notices, events, meetings, peripherals, admin helpers) from infra. createServices spreads the result,
 * so each service is reached as `services.<name>`. `vcs` is the video conferencing adapter wired by
 * createServices; meetings resolve it at call time.
 */
export function createDirectoryServices(
  infra: Infra,
  opts: {
    vcs?: () => VideoConferencing | undefined;
    announced?: AnnounceHook;
    audit?: Pick<AuditService, 'record'>;
  } = {},
) {
  const r = tenantRepos(infra);
  const lastSeen: LastSeenStore = {
    touchLastSeenMany: (tenant, entries) => r.users(tenant).touchLastSeenMany(entries),
    lastSeenAt: async (tenant, id) => (await r.users(tenant).findById(id))?.lastSeenAt,
  };
  const presence = new PresenceService({
    store: new PresenceStore({ redis: infra.redis, keys: infra.keys }),
    lastSeen,
    logger: infra.logger,
  });
  const onlineMany = (t: string, ids: readonly string[]) => presence.onlineMany(t, ids);
  const pageMaxTake = infra.config.limits.pageMaxTake;
  const mediaAccess = new MediaAccess({ files: (t) => new MediaFileRepository(infra.mongo.tenantDb(t)) });
  const { publicUrl, baseDomain } = infra.config.http;
  const admin = new AdminService({
    users: r.users,
    settings: r.settings,
    connections: (t, id) => presence.connections(t, id),
    site: {
      publicUrl,
      baseDomain,
      issuerTemplate: infra.config.auth.oidc.issuerTemplate,
      clientId: infra.config.auth.oidc.clientId,
    },
    qr: infra.qr,
    audit: opts.audit,
  });
  const directory = contactDirectory(infra, r.users);
  const { ttlSeconds } = infra.config.careTeamCache;
  const directoryScope = new DirectoryScope({
    patientScope: (t) => admin.patientScope(t),
    events: r.events,
    groups: r.groups,
    careTeams: ttlSeconds > 0 ? new CareTeamStore({ redis: infra.redis, keys: infra.keys, ttlSeconds }) : undefined,
    logger: infra.logger,
  });
  const vcs = () => {
    const v = opts.vcs?.();
    if (!v) throw new AppError('service_unavailable', 'No video conferencing adapter is configured');
    return v;
  };
  const webApp = new WebAppUrls({
    site: { publicUrl, baseDomain },
    deployment: infra.config.http.webApp,
    settings: r.settings,
  });
  const peripherals = new PeripheralService({ ...r, secret: infra.config.auth.provisioningCode });
  return {
    presence,
    admin,
    webApp,
    contactDirectory: directory,
    directoryScope,
    contacts: new ContactService({
      ...r,
      onlineMany,
      store: infra.store,
      pageMaxTake,
      search: new UserDirectorySearch(r.users, directory),
      visibleTo: (p) => directoryScope.visibleTo(p),
    }),
    groups: new GroupService(r),
    notices: new NoticeService(r),
    events: new EventService({
      ...r,
      onlineMany,
      pageMaxTake,
      canReadMedia: (p, hash) => mediaAccess.canRead(p, hash),
      announced: opts.announced,
      audit: opts.audit,
    }),
    meetings: new MeetingService({
      ...r,
      features: (t) => admin.features(t),
      meetingSettings: (t) => admin.meetingSettings(t),
      vcs,
      announced: opts.announced,
      audit: opts.audit,
      resolveDevice: (t, id) => peripherals.resolveDeviceId(t, id),
    }),
    calls: new CallService(r),
    peripherals,
    deviceRegistrations: new DeviceRegistrationService({
      registrations: (t: string) => new DeviceRegistrationRepository(infra.mongo.tenantDb(t)),
      audit: opts.audit,
    }),
  };
}
