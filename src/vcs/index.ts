import type { RedisClient } from '../data/redis.js';
import type { Config } from '../config/config.js';
import type { RedisKeys } from '../data/redis-keys.js';
import { EmbeddedVcs } from './embedded.adapter.js';
import { LiveKitVcs } from './livekit.adapter.js';
import type { VideoConferencing } from './vcs.port.js';

export type {
  VideoConferencing,
  VcsRoom,
  VcsJoinDetails,
  VcsParticipant,
  VcsRecording,
  VcsRecordingArtifact,
} from './vcs.port.js';
export { EmbeddedVcs, roomNameFor } from './embedded.adapter.js';

/** Picks the adapter named by `config.vcs.adapter` (VCS_ADAPTER). */
export function createVcs(config: Config, deps: { redis: RedisClient; keys: RedisKeys }): VideoConferencing {
  if (config.vcs.adapter === 'livekit') {
    const { url, apiKey, apiSecret } = config.vcs.livekit;
    return new LiveKitVcs({ url: url!, apiKey: apiKey!, apiSecret: apiSecret! });
  }
  return new EmbeddedVcs({
    redis: deps.redis,
    recordingKey: deps.keys.vcsRecording,
    closedRoomKey: deps.keys.vcsClosedRoom,
    removedKey: deps.keys.vcsRemoved,
    secret: config.vcs.embedded.secret,
    publicUrl: config.http.publicUrl,
    finalizeMs: config.vcs.embedded.finalizeMs,
  });
}
