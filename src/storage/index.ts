import type { Config } from '../config/config.js';
import type { ObjectStore } from './object-store.js';
import { FsObjectStore } from './fs.store.js';

export type { ObjectStore } from './object-store.js';

/** Picks the driver named by configuration. */
export async function createObjectStore(cfg: Config['storage']): Promise<ObjectStore> {
  if (cfg.driver === 's3') {
    const { S3ObjectStore } = await import('./s3.store.js');
    return new S3ObjectStore(cfg.s3);
  }
  return new FsObjectStore(cfg.fsRoot);
}
