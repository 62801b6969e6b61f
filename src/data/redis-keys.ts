/**
 * Every Redis key and channel name the service uses, built here and nowhere else. Keys of one
 * tenant share a `{tenant}` hash tag so multi-key operations stay in one cluster slot; the actor
 * runtime's keys share a tag per shard and per node (src/actors/runtime/actor-keys.ts); on a cluster
 * the job queues' keys share one tag per deployment prefix (BullMQ's scripts touch several keys of a
 * queue at once). Decision 860.
 */
export function redisKeys(prefix: string, opts: { cluster?: boolean } = {}) {
  const t = (tenant: string) => `${prefix}t:{${tenant}}:`;
  const idpStore = (tenant: string) => `${t(tenant)}idp:`;
  return {
    prefix,
    rateLimit: (bucket: string, id: string) => `${prefix}rl:${bucket}:${id}`,
    session: (tenant: string, sessionId: string) => `${t(tenant)}session:${sessionId}`,
    revokedSession: (tenant: string, sessionId: string) => `${t(tenant)}revoked:${sessionId}`,
    /** Marker of a revoked realm (identity-provider) session, by the `sid` its tokens carry. */
    revokedRealmSession: (tenant: string, sid: string) => `${t(tenant)}revoked-realm:${sid}`,
    /** Epoch seconds before which a user's identity-provider tokens are refused (sign-out of every session). */
    userNotBefore: (tenant: string, userId: string) => `${t(tenant)}not-before:${userId}`,
    /** `jti` of a back-channel logout token already used (replay protection). */
    logoutTokenJti: (tenant: string, jti: string) => `${t(tenant)}bcl-jti:${jti}`,
    loginCode: (tenant: string, code: string) => `${t(tenant)}logincode:${code}`,
    /** PIN lockout state of one account (by username, so unknown usernames behave alike): docs/decisions/131. */
    pinGuard: (tenant: string, username: string) => ({
      sources: `${t(tenant)}pin:${username}:sources`,
      day: `${t(tenant)}pin:${username}:day`,
      hard: `${t(tenant)}pin:${username}:hard`,
    }),
    presence: (tenant: string, userId: string) => `${t(tenant)}presence:${userId}`,
    presenceNodes: (tenant: string) => `${t(tenant)}presence-nodes`,
    nodeAlive: (nodeId: string) => `${prefix}node:${nodeId}:alive`,
    /** Set of `tenant|userId|socketId` connections a node holds, so a sweep can remove a dead node's. */
    presenceNodeConnections: (nodeId: string) => `${prefix}node:${nodeId}:presence`,
    /** Set of node ids that hold (or held) presence connections. */
    presenceNodeIndex: `${prefix}presence:nodes`,
    signingKeys: `${prefix}auth:signing-keys`,
    /** Held by the one workers node that signs the audit checkpoints of the current period (decision 881). */
    auditCheckpointTurn: `${prefix}audit:checkpoint-turn`,
    /** The last checkpoint the service signed of a tenant's audit chain, kept outside the database (decision 1020). */
    auditAnchor: (tenant: string) => `${t(tenant)}audit:anchor`,
    /** Embedded identity provider: shared signing JWKS and cookie keys, and its per-realm storage. */
    idpSecrets: `${prefix}auth:idp-secrets`,
    idpStore,
    /** The records of one embedded realm (oidc-provider's storage) and their indexes, under `idpStore(tenant)`. */
    idpRecords: (tenant: string) => idpRecordKeys(idpStore(tenant)),
    /**
     * BullMQ's key prefix. On a cluster, `{<prefix>bull}`: one slot for every queue of the deployment;
     * on one server the untagged `<prefix>bull` that earlier releases used, so queued jobs survive an upgrade.
     */
    queuePrefix: opts.cluster ? `{${prefix}bull}` : `${prefix}bull`,
    /** Hash with an event's recording state (session counter, state, recording id). */
    recording: (tenant: string, eventId: string) => `${t(tenant)}recording:${eventId}`,
    /** Hash the embedded video conferencing adapter keeps per recording (shared by every node). */
    vcsRecording: (recordingId: string) => `${prefix}vcs:recording:${recordingId}`,
    /** Marker of a room the embedded adapter closed (endMeeting): its join tokens are refused. */
    vcsClosedRoom: (roomName: string) => `${prefix}vcs:closed:${roomName}`,
    /**
     * Hash of removal generations per participant identity of a room the embedded adapter keeps
     * (removeParticipant): join tokens minted under an older generation are refused.
     */
    vcsRemoved: (roomName: string) => `${prefix}vcs:removed:${roomName}`,
    actors: `${prefix}actors:`,
    hubAdapter: `${prefix}hub`,
    /**
     * Pub/Sub channel of pushes produced outside the hub (workers, actors without a hub attached):
     * JSON { rooms, event, payload }; the same channel as the actor runtime's `hubPushChannel`.
     */
    hubPush: `${prefix}actors:hub-push`,
    /** Contact directory change log (decision 212): a sequence number and the recent changes by number. */
    /**
     * A recipient's push history (a stream of recoverable pushes, src/realtime/push-history.ts) and its
     * position hash (epoch, last number, Redis run id). `stream` is `u:<userId>` or `d:<deviceId>`; both keys
     * share one hash tag per recipient, so histories spread over a cluster's slots.
     */
    pushStream: (tenant: string, stream: string) => `${prefix}push:{${tenant}:${stream}}`,
    pushPosition: (tenant: string, stream: string) => `${prefix}push:{${tenant}:${stream}}:pos`,
    /** The recipients (streams) logically in a meeting room, whether connected or not (by room name). */
    pushRoster: (room: string) => `${prefix}roster:{${room}}`,
    directoryVersion: (tenant: string) => `${t(tenant)}directory:version`,
    directoryChanges: (tenant: string) => `${t(tenant)}directory:changes`,
    /**
     * The care-team cache of decision 1132: the tenant's generation (changed by every write that can change
     * a care team), the writes under way (a sorted set of tokens by deadline) and one patient's cached team.
     */
    careTeamGeneration: (tenant: string) => `${t(tenant)}care-team:gen`,
    careTeamWrites: (tenant: string) => `${t(tenant)}care-team:writes`,
    careTeam: (tenant: string, userId: string) => `${t(tenant)}care-team:u:${userId}`,
    userSockets: (tenant: string) => `${t(tenant)}revocations`,
    revocationChannel: `${prefix}revocations`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;

/**
 * Keys of an embedded realm's records under its prefix: oidc-provider's records by model and id, the
 * records of a grant (revoked together), an account's sessions and the session of a `sid` (read to end
 * realm sessions), and the lookups by interaction uid and device user code.
 */
export function idpRecordKeys(prefix: string) {
  return {
    record: (model: string, id: string) => `${prefix}${model}:${id}`,
    grant: (grantId: string) => `${prefix}grant:${grantId}`,
    account: (accountId: string) => `${prefix}account-sessions:${accountId}`,
    sid: (sid: string) => `${prefix}sid:${sid}`,
    uid: (uid: string) => `${prefix}uid:${uid}`,
    userCode: (userCode: string) => `${prefix}userCode:${userCode}`,
  };
}

export type IdpRecordKeys = ReturnType<typeof idpRecordKeys>;
