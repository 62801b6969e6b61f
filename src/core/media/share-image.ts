import { AppError } from '../../kernel/errors.js';
import { SHA256_HEX } from '../../storage/layout.js';

/** What shareImage may put on a headset: the tenant's own media, by content hash or by its URL here. */
export type SharedImage = { hash: string } | { url: string };

/** Where this deployment serves a tenant's media: the hosts (and ports) its clients reach it on. */
export interface OwnMediaOrigin {
  tenant: string;
  /** Host names the tenant's media is served on: the tenant host and the public URL's host. */
  hosts: readonly string[];
  /**
   * The public URL's port ('' for the scheme's default): the only port a media URL may name; undefined
   * when the deployment listens on an ephemeral port (PORT=0, tests), where the URL's port is not known.
   */
  port?: string;
  /** Plain http is accepted only when the deployment itself is served over http (development, tests). */
  allowHttp: boolean;
}

/** The download paths of a tenant's media (docs/media.md): `{tenant}` and the content hash. */
const MEDIA_PATHS = [
  /^\/api\/media\/download\/([^/]+)\/([^/]+)$/,
  /^\/media\/download\/([^/]+)\/([^/]+)$/,
  /^\/files\/([^/]+)\/media\/([^/]+)$/,
];

function refuse(message: string): never {
  throw new AppError('url_not_allowed', message, { errors: [{ field: 'image.url', message }] });
}

/**
 * The content hash a shared image URL names, when it is one of the tenant's own media URLs on this
 * deployment (decision 1040); `url_not_allowed` otherwise. No URL of another host is ever put on a
 * headset: a headset fetches what it is sent from inside the hospital network, and no check made here
 * (name, literal or resolved address) binds where it connects later (NAT64, 6to4, IPv4-compatible
 * literals, wildcard DNS names, `metadata`, rebinding). An outside image is uploaded first, then shared.
 */
export function ownMediaHash(raw: string, own: OwnMediaOrigin): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('image.url is not a URL');
  }
  if (url.protocol !== 'https:' && !(own.allowHttp && url.protocol === 'http:'))
    refuse('image.url must be an https URL of this service');
  if (url.username || url.password) refuse('image.url must not carry credentials');
  if (!own.hosts.includes(url.hostname.toLowerCase()) || (own.port !== undefined && url.port !== own.port))
    refuse('image.url must be a media URL of this service (upload the image, then share it)');
  if (url.search || url.hash) refuse('image.url must be a media URL of this service, without query or fragment');
  const m = MEDIA_PATHS.map((re) => re.exec(url.pathname)).find(Boolean);
  if (!m) refuse('image.url must be a media URL of this service (upload the image, then share it)');
  if (m[1] !== own.tenant) refuse("image.url must name this tenant's media");
  if (!SHA256_HEX.test(m[2]!)) refuse('image.url must name media by its content hash');
  return m[2]!;
}

/**
 * The one check shareImage runs before a headset sees anything: the content hash, given or named by
 * the tenant's own media URL, of a file the sharer may read. Returns the hash (the event is granted it).
 */
export async function checkSharedImage(
  image: SharedImage,
  own: OwnMediaOrigin,
  canRead: (hash: string) => Promise<boolean>,
): Promise<string> {
  const hash = 'url' in image ? ownMediaHash(image.url, own) : image.hash;
  if (!(await canRead(hash)))
    throw new AppError('file_not_found', 'No media of this tenant that you may read has that hash', {
      errors: [{ field: 'url' in image ? 'image.url' : 'image.hash', message: 'unknown media' }],
    });
  return hash;
}
