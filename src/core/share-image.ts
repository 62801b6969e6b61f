import { isIP } from 'node:net';
import { AppError } from './errors.js';

/** What shareImage may put on a headset: the tenant's own media by content hash, or an https URL. */
export type SharedImage = { hash: string } | { url: string };

/** IPv4 ranges a headset must never be sent to: loopback, private, link-local (cloud metadata), CGNAT, unspecified, multicast. */
const BLOCKED_V4: [number, number][] = [
  [0x00000000, 8],
  [0x0a000000, 8],
  [0x64400000, 10],
  [0x7f000000, 8],
  [0xa9fe0000, 16],
  [0xac100000, 12],
  [0xc0a80000, 16],
  [0xe0000000, 3],
];

function v4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function blockedV4(ip: string): boolean {
  const n = v4Number(ip);
  return BLOCKED_V4.some(([base, bits]) => n >>> (32 - bits) === base >>> (32 - bits));
}

/** IPv6: unspecified, loopback, link-local fe80::/10, unique-local fc00::/7, multicast, and v4-mapped blocked addresses. */
function blockedV6(ip: string): boolean {
  const a = ip.toLowerCase();
  if (a === '::' || a === '::1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return blockedV4(mapped[1]!);
  if (a.startsWith('::ffff:')) return true;
  return /^(fe[89ab]|f[cd]|ff)/.test(a);
}

function refuse(message: string): never {
  throw new AppError('url_not_allowed', message, { errors: [{ field: 'image.url', message }] });
}

/**
 * Refuses any image URL but https to a public host: `javascript:`, `file:`, `data:` and plain http
 * are refused outright, and so are loopback, private and link-local addresses (the headset would
 * fetch cloud metadata or the hospital's internal services for whoever shared the link). Names that
 * only resolve to such addresses are the network's to block; this check needs no DNS.
 */
export function checkImageUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('image.url is not a URL');
  }
  if (url.protocol !== 'https:') refuse('image.url must be an https URL');
  if (url.username || url.password) refuse('image.url must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (
    !host ||
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host.endsWith('.local') ||
    host.endsWith('.internal')
  )
    refuse('image.url must name a public host');
  const kind = isIP(host);
  if ((kind === 4 && blockedV4(host)) || (kind === 6 && blockedV6(host)))
    refuse('image.url must name a public address');
  return url;
}

/**
 * The one check shareImage runs before a headset sees anything: an https URL that passes
 * {@link checkImageUrl}, or the content hash of a file stored in this tenant.
 */
export async function checkSharedImage(
  image: SharedImage,
  hasTenantMedia: (hash: string) => Promise<boolean>,
): Promise<void> {
  if ('url' in image) {
    checkImageUrl(image.url);
    return;
  }
  if (!(await hasTenantMedia(image.hash)))
    throw new AppError('file_not_found', 'No media of this tenant has that hash', {
      errors: [{ field: 'image.hash', message: 'unknown media' }],
    });
}
