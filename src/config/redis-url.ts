/**
 * Where Redis is: one server (`redis://` or `rediss://`, as ioredis reads it) or a Redis Cluster
 * (`redis+cluster://` or `rediss+cluster://USER:PASSWORD@host1:port1,host2:port2,...`, decision 860).
 * A cluster URL lists seed nodes only: the client learns every master from any one that answers, so a
 * few are enough. One user and password for every node (Redis ACLs are per node; set them alike).
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | {
      kind: 'cluster';
      nodes: { host: string; port: number }[];
      username?: string;
      password?: string;
      tls: boolean;
    };

const CLUSTER = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?(?:\?.*)?$/;

/** Reads a REDIS_URL; throws an Error saying what is wrong (the config schema reports it). */
export function parseRedisUrl(url: string): RedisTarget {
  if (/^rediss?:\/\//.test(url)) return { kind: 'single', url };
  const m = CLUSTER.exec(url);
  if (!m) throw new Error('must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL');
  const [, scheme, userinfo, hostList] = m;
  const nodes = hostList!.split(',').map((h) => {
    const hm = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(h.trim());
    const port = Number(hm?.[2]);
    if (!hm || port < 1 || port > 65535) throw new Error(`cluster node '${h}' must be host:port`);
    return { host: hm[1]!.replace(/^\[|\]$/g, ''), port };
  });
  const colon = userinfo?.indexOf(':') ?? -1;
  const username = userinfo && decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const password = userinfo && colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : undefined;
  return {
    kind: 'cluster',
    nodes,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    tls: scheme === 'rediss',
  };
}

/** True when the URL names a password (production refuses an unauthenticated Redis). */
export function redisUrlHasPassword(url: string): boolean {
  try {
    const t = parseRedisUrl(url);
    return t.kind === 'cluster' ? !!t.password : new URL(url).password !== '';
  } catch {
    return false;
  }
}
