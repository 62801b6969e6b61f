import { MediaFileRepository } from '../data/repositories/media-file.repository.js';
import { FileShareRepository } from '../data/repositories/file-share.repository.js';
import { ImportRepository } from '../data/repositories/import.repository.js';
import { PendingUserRepository } from '../data/repositories/pending-user.repository.js';
import type { Infra } from '../app/index.js';
import { historyPublisher } from '../realtime/redis-publisher.js';
import { rooms } from '../realtime/rooms.js';
import { MediaService } from '../core/media/media.service.js';
import { MediaAccess } from '../core/media/media-access.js';
import { ThumbnailRequests } from '../core/media/thumbnail-requests.js';
import { ImportService } from '../core/media/import.service.js';
import { ActivationService } from '../core/media/activation.service.js';
import { RecordsService } from '../core/media/records.service.js';
import { EventRepository } from '../data/repositories/event.repository.js';
import { ParticipantLogRepository } from '../data/repositories/participant-log.repository.js';
import { CallRecordRepository } from '../data/repositories/call-record.repository.js';
import type { AccountSetupService } from '../core/identity/account-setup.service.js';
import type { AnnounceHook } from '../core/webhooks/webhook-events.js';
import type { AuditRecorder } from '../core/audit/audit-by.js';
import type { AuditService } from '../core/audit/audit.service.js';

/**
 * Media uploads and downloads, the records of events and sessions (ledger, files), pending-user
 * imports and their activation, wired from infra (spread into
 * createServices). Import progress reaches the uploader's connections through the hub push channel, so
 * a workers-only node needs no Socket.IO server.
 */
export function createMediaServices(
  infra: Pick<Infra, 'store' | 'mongo' | 'queues' | 'redis' | 'keys' | 'logger' | 'config'>,
  deps: {
    accountSetup: Pick<AccountSetupService, 'provision'>;
    announced?: AnnounceHook;
    audit?: AuditRecorder & Pick<AuditService, 'list'>;
  },
) {
  const tenantDb = (tenant: string) => infra.mongo.tenantDb(tenant);
  const mediaAccess = new MediaAccess({ files: (t) => new MediaFileRepository(tenantDb(t)), audit: deps.audit });
  const thumbnails = new ThumbnailRequests((data) => infra.queues.enqueue('thumbnail', data));
  const media = new MediaService({
    store: infra.store,
    files: (t) => new MediaFileRepository(tenantDb(t)),
    shares: (t) => new FileShareRepository(tenantDb(t)),
    access: mediaAccess,
    enqueueThumbnail: (job) => thumbnails.request(job.tenant, job.hash),
    announced: deps.announced,
    audit: deps.audit,
  });
  const importRepo = (t: string) => new ImportRepository(tenantDb(t));
  const pendingUsers = (t: string) => new PendingUserRepository(tenantDb(t));
  const publisher = historyPublisher(infra.redis, infra.keys, infra.config.hub.history, infra.logger);
  const imports = new ImportService({
    store: infra.store,
    imports: importRepo,
    pendingUsers,
    mediaFiles: (t) => new MediaFileRepository(tenantDb(t)),
    notify: (tenant, userId, push) => publisher.emit(rooms.user(tenant, userId), 'importProgress', push),
    enqueueImport: (job) => infra.queues.enqueue('pending-user-import', job),
    announced: deps.announced,
    audit: deps.audit,
  });
  const activation = new ActivationService({
    imports: importRepo,
    pendingUsers,
    accountSetup: deps.accountSetup,
    audit: deps.audit,
  });
  const records = new RecordsService({
    events: (t) => new EventRepository(tenantDb(t)),
    files: (t) => new MediaFileRepository(tenantDb(t)),
    ledger: (t) => new ParticipantLogRepository(tenantDb(t)),
    calls: (t) => new CallRecordRepository(tenantDb(t)),
    pageMaxTake: infra.config.limits.pageMaxTake,
    audit: deps.audit,
  });
  return { media, imports, mediaAccess, activation, records };
}
