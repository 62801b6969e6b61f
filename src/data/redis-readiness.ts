import { Cluster } from 'ioredis';
import type { RedisClient } from './redis.js';

/**
 * Readiness of the configured Redis (/readyz). One server: it answers PING. A cluster: every master the
 * client knows answers CLUSTER INFO within `timeoutMs` and reports `cluster_state:ok`; a master that
 * does not answer, or a cluster that lost slot coverage (a master failed with no replica to take over),
 * cannot serve every key, so the node is not ready. Rejects with the reasons, one per master.
 */
export async function redisReadiness(client: RedisClient, timeoutMs: number): Promise<void> {
  if (!(client instanceof Cluster)) {
    await client.ping();
    return;
  }
  const masters = client.nodes('master');
  if (!masters.length) throw new Error('no master of the cluster is known');
  const results = await Promise.allSettled(masters.map((n) => answerWithin(n.cluster('INFO'), timeoutMs)));
  const problems: string[] = [];
  results.forEach((r, i) => {
    const at = `${masters[i]!.options.host}:${masters[i]!.options.port}`;
    if (r.status === 'rejected') {
      problems.push(`${at} did not answer (${(r.reason as Error).message})`);
      return;
    }
    const state = /^cluster_state:(\S+)/m.exec(String(r.value))?.[1];
    if (state !== 'ok') problems.push(`cluster_state:${state ?? 'unknown'} on ${at}`);
  });
  if (problems.length) throw new Error(problems.join('; '));
}

function answerWithin<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
