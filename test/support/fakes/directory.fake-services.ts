import { UserDirectorySearch } from '../../../src/data/search/user-search.js';
import os from 'node:os';
import path from 'node:path';
import { AdminService } from '../../../src/core/tenants/admin.service.js';
import { AuditService } from '../../../src/core/audit/audit.service.js';
import { ContactService } from '../../../src/core/directory/contact.service.js';
import { DirectoryScope } from '../../../src/core/directory/directory-scope.js';
import { MeetingService } from '../../../src/core/meetings/meeting.service.js';
import { QrRenderer } from '../../../src/qr/qr-renderer.js';
import { RecordingConsentService } from '../../../src/core/meetings/recording-consent.service.js';
import { SecurityRulesService } from '../../../src/core/identity/security-rules.service.js';
import { TenantSettingsService } from '../../../src/core/tenants/tenant-settings.service.js';
import { FsObjectStore } from '../../../src/storage/fs.store.js';
import { FakeDeviceRepository } from './directory.fake.js';
import { fakeRepositories, FakeMongo } from './index.js';
import { FakeVcs } from './vcs.fake.js';

/**
 * The directory, meeting and tenant-settings services as src/core/directory.wiring.ts and
 * src/composition.ts wire them, on the fake repositories: the real AdminService, DirectoryScope,
 * ContactService, MeetingService, TenantSettingsService, SecurityRulesService and RecordingConsentService.
 * Presence is a set of user ids a test marks online (the presence store's answer); the video
 * conferencing system is the in-memory FakeVcs.
 */
export function fakeDirectoryServices(opts: { mongo?: FakeMongo } = {}) {
  const mongo = opts.mongo ?? new FakeMongo();
  const repos = fakeRepositories(mongo);
  const online = new Set<string>();
  const vcs = new FakeVcs();
  const audit = new AuditService({ audits: repos.audits });
  const admin = new AdminService({
    users: repos.users,
    settings: repos.settings,
    connections: async (_t, id) => (online.has(id) ? 1 : 0),
    site: {
      publicUrl: 'http://consult.test',
      baseDomain: 'consult.test',
      issuerTemplate: 'http://{tenant}.consult.test/oidc',
      clientId: 'consult-app',
    },
    qr: new QrRenderer(),
    audit,
  });
  const directoryScope = new DirectoryScope({
    patientScope: (t) => admin.patientScope(t),
    events: repos.events,
    groups: repos.groups,
  });
  const contacts = new ContactService({
    ...repos,
    onlineMany: async (_t, ids) => new Set(ids.filter((id) => online.has(id))),
    store: new FsObjectStore(path.join(os.tmpdir(), 'consult-fake-avatars')),
    pageMaxTake: 100,
    search: new UserDirectorySearch(repos.users),
    visibleTo: (p) => directoryScope.visibleTo(p),
  });
  const meetings = new MeetingService({
    ...repos,
    devices: (t) => new FakeDeviceRepository(mongo.tenantDb(t)),
    features: (t) => admin.features(t),
    meetingSettings: (t) => admin.meetingSettings(t),
    vcs: () => vcs,
    audit,
    // PeripheralService resolves a hardware id to the device's own id; a device's own id is itself.
    resolveDevice: async (_t, id) => id,
  });
  const rules = new SecurityRulesService({ credentials: repos.credentials });
  const tenantSettings = new TenantSettingsService({
    settings: repos.settings,
    admin,
    rules,
    caches: [admin, rules],
    audit,
  });
  const recordingConsent = new RecordingConsentService({
    events: repos.events,
    meetingSettings: (t) => admin.meetingSettings(t, { fresh: true }),
    audit,
  });
  return {
    mongo,
    repos,
    online,
    vcs,
    audit,
    admin,
    directoryScope,
    contacts,
    meetings,
    rules,
    tenantSettings,
    recordingConsent,
  };
}

export type FakeDirectoryServices = ReturnType<typeof fakeDirectoryServices>;
