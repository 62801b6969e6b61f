import { createHash } from 'node:crypto';
import { multipart, png } from './form.js';
import { request } from './http.js';

/**
 * Uploads a small PNG as `token`'s user and answers its content hash and its media URL on the tenant's
 * host: the form shareImage accepts for a URL (only the tenant's own media, decision 1040).
 */
export async function uploadImage(
  baseUrl: string,
  tenant: string,
  token: string,
  size = 16,
): Promise<{ hash: string; url: string }> {
  const content = await png(size, size);
  const { body, headers } = multipart([{ name: 'file', file: { fileName: `image-${size}.png`, content } }]);
  const r = await request(baseUrl, 'POST', '/api/media/upload', { tenant, token, rawBody: body, headers });
  if (r.status !== 201) throw new Error(`upload answered ${r.status}: ${r.text.slice(0, 200)}`);
  const hash = createHash('sha256').update(content).digest('hex');
  return { hash, url: `http://${tenant}.localhost:${new URL(baseUrl).port}/api/media/download/${tenant}/${hash}` };
}
