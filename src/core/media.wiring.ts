import { MediaFileRepository } from '../data/repositories/media-file.repository.js';
import type { Infra } from '../infra.js';
import { MediaService } from './media.service.js';
import { MediaAccess } from './media-access.js';
import { ImportService } from './import.service.js';

/** Media uploads and downloads, and pending-user imports, wired from infra (spread into createServices). */
export function createMediaServices(infra: Pick<Infra, 'store' | 'mongo' | 'queues'>) {
  const tenantDb = (tenant: string) => infra.mongo.tenantDb(tenant);
  const mediaAccess = new MediaAccess({ files: (t) => new MediaFileRepository(tenantDb(t)) });
  const media = new MediaService({
    store: infra.store,
    tenantDb,
    access: mediaAccess,
    enqueueThumbnail: (job) => infra.queues.enqueue('thumbnail', job),
  });
  const imports = new ImportService({
    store: infra.store,
    tenantDb,
    enqueueImport: (job) => infra.queues.enqueue('pending-user-import', job),
  });
  return { media, imports, mediaAccess };
}
