import type { Config } from '../config/config.js';
import type { ObjectStore } from './object-store.js';
import { FsObjectStore } from './fs.store.js';

export type { ObjectStore } from './object-store.js';

/** Picks the driver named by configuration. */
export async function createObjectStore(cfg: Config['storage']): Promise<ObjectStore> {
  if (cfg.driver === 's3') {
    const { S3ObjectStore } = await import('./s3.store.js');
    const store = new S3ObjectStore(cfg.s3);
    // A missing bucket is created (embedded and test setups); an unreachable server shows in /readyz.
    await store.ensureBucket().catch(() => undefined);
    return store;
  }
  return new FsObjectStore(cfg.fsRoot, { syncBytes: cfg.fsSyncBytes });
}
