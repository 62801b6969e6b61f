import { AppError } from '../kernel/errors.js';
import { isSafeKey } from './object-store.js';

/**
 * Where things live in the object store (docs/storage.md). Every key starts with the tenant, so one
 * tenant's objects can never be named through another tenant's paths.
 */
export const CONTAINERS = ['media', 'thumbnails', 'recordings', 'assets', 'imports'] as const;
export type Container = (typeof CONTAINERS)[number];

/** Containers readable through GET /files/{tenantId}/{container}/{*path}; imports stay private. */
export const READABLE_CONTAINERS: readonly Container[] = ['media', 'thumbnails', 'recordings', 'assets'];

export const SHA256_HEX = /^[a-f0-9]{64}$/;

const THUMBNAIL_KEY = /^t\/[^/]+\/thumbnails\/[a-f0-9]{64}\.webp$/;

export const layout = {
  /** Prefix content-addressed uploads go under: `t/{tenant}/media/{sha256}`. */
  mediaPrefix: (tenant: string) => `t/${tenant}/media`,
  media: (tenant: string, hash: string) => `t/${tenant}/media/${hash}`,
  /** Derived from the source hash, so re-running the thumbnail job rewrites the same object. */
  thumbnail: (tenant: string, hash: string) => `t/${tenant}/thumbnails/${hash}.webp`,
  /**
   * The content type every object at `key` has by where it lives, if the layout fixes one: a thumbnail is
   * always WebP. A store need not record it beside the object (decision 1188).
   */
  impliedContentType: (key: string): string | undefined => (THUMBNAIL_KEY.test(key) ? 'image/webp' : undefined),
  importsPrefix: (tenant: string) => `t/${tenant}/imports`,
  import: (tenant: string, hash: string) => `t/${tenant}/imports/${hash}`,
  /** A path inside a container; refuses traversal, hidden segments and unknown containers. */
  containerFile(tenant: string, container: string, filePath: string): string {
    if (!(READABLE_CONTAINERS as readonly string[]).includes(container))
      throw new AppError('file_not_found', `No container '${container}'`);
    const key = `t/${tenant}/${container}/${filePath}`;
    if (!isSafeKey(key)) throw new AppError('bad_request', 'Invalid file path');
    return key;
  },
};
