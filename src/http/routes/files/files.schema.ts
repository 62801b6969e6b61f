import { z } from 'zod';
import { DownloadQuery } from '../media/media.schema.js';

export { DownloadQuery };

export const SharedParams = z.object({ filePath: z.string().min(1).max(256) });

/** `path` arrives as the decoded segments of the wildcard (Express 5 `*path`). */
export const ContainerParams = z.object({
  tenantId: z.string().min(1).max(63),
  container: z.string().min(1).max(63),
  path: z.array(z.string().min(1).max(255)).min(1).max(32),
});
