/**
 * Redis keys of the actor runtime, all under the `actors` prefix of src/data/redis-keys.ts. Keys of one
 * shard share a `{sN}` hash tag so the fenced Lua scripts touch one cluster slot; a node's inbox and
 * reply list share the node's tag (one slot per node; each list has its own blocking reader).
 */
export function actorKeys(base: string) {
  const shard = (s: number) => `${base}{s${s}}:`;
  const node = (id: string) => `${base}node:{${id}}:`;
  return {
    base,
    /** ZSET of hosting nodes, scored by heartbeat expiry (Redis server time, ms). */
    nodes: `${base}nodes`,
    inbox: (nodeId: string) => `${node(nodeId)}inbox`,
    replies: (nodeId: string) => `${node(nodeId)}replies`,
    /** Where a node's direct link listens (JSON host and port, decision 1186), while it lives. */
    link: (nodeId: string) => `${node(nodeId)}link`,
    /** The secret both ends of a direct link prove they hold (decision 1186). */
    linkSecret: `${base}link-secret`,
    lease: (s: number) => `${shard(s)}lease`,
    epoch: (s: number) => `${shard(s)}epoch`,
    snapshot: (s: number, key: string) => `${shard(s)}snap:${key}`,
    dedupe: (s: number, key: string, id: string) => `${shard(s)}dedupe:${key}:${id}`,
    /** The pushes of an actor's last saved turn until they were sent (written with the turn, deleted after). */
    outbox: (s: number, key: string) => `${shard(s)}outbox:${key}`,
    /** ZSET of actors with pending timers, scored by the earliest due time (epoch ms). */
    timers: (s: number) => `${shard(s)}timers`,
    hubPushChannel: `${base}hub-push`,
  };
}

export type ActorKeys = ReturnType<typeof actorKeys>;
