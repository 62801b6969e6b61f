// What one jest run's tests left in the local services, found by the run's tag and removed at its end
// (test/support/global-teardown.ts). Every id test/support/env.ts makes under jest starts with the tag,
// so the run's Redis prefixes (`test:<id>:`) and databases (`tc_<id>`, `tt_<id>_...`) are told apart
// from other runs'. Plain JavaScript: jest loads global set-up and teardown modules without transforming
// what they import.
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { MongoClient } from 'mongodb';

/** The run's tag (four letters), made by the first global set-up of a jest run and kept in its environment. */
export function ensureRunTag() {
  process.env.TEST_RUN_TAG ??= Array.from(randomBytes(4), (b) => String.fromCharCode(97 + (b % 26))).join('');
  return process.env.TEST_RUN_TAG;
}

/** A client of `url`: redis:// or rediss://, or redis+cluster://USER:PASSWORD@host:port,... (src/config/redis-url.ts). */
function connect(url) {
  const m = /^(rediss?)\+cluster:\/\/(?:([^@]*)@)?([^/]+)\/?$/.exec(url);
  if (!m) return new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const [, scheme, userinfo = '', hosts] = m;
  const colon = userinfo.indexOf(':');
  const username = userinfo ? decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon)) : undefined;
  const password = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : undefined;
  const nodes = hosts.split(',').map((h) => {
    const i = h.lastIndexOf(':');
    return { host: h.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(h.slice(i + 1)) };
  });
  return new Cluster(nodes, {
    lazyConnect: true,
    redisOptions: { username, password, ...(scheme === 'rediss' ? { tls: {} } : {}) },
  });
}

/**
 * Deletes every key of the run's prefixes on each primary of `url`: `test:<tag>...`, and the queues'
 * `{test:<tag>...}` (a hash tag on a cluster); answers how many.
 */
export async function dropRunKeys(url, tag) {
  const client = connect(url);
  let dropped = 0;
  try {
    await client.connect();
    await client.ping();
    const primaries = client instanceof Cluster ? client.nodes('master') : [client];
    for (const [redis, match] of primaries.flatMap((r) => [`test:${tag}*`, `{test:${tag}*`].map((m) => [r, m]))) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        // One key a command: on a cluster, one primary's keys may lie in different slots.
        await Promise.all(keys.map((k) => redis.unlink(k)));
        dropped += keys.length;
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    client.disconnect();
  }
  return dropped;
}

/** Drops the databases whose name is a short prefix, `_` and an id of the run (`tc_<id>`, `tt_<id>_x`); answers how many. */
export async function dropRunDatabases(uri, tag) {
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    const ours = databases.map((d) => d.name).filter((name) => new RegExp(`^[a-z]{1,4}_${tag}`).test(name));
    for (const name of ours) await client.db(name).dropDatabase();
    return ours.length;
  } finally {
    await client.close();
  }
}
