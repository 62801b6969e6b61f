import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../data/redis.js';
import { createSigner, createVerifier } from 'fast-jwt';
import { AppError } from '../kernel/errors.js';
import type {
  VcsJoinDetails,
  VcsParticipant,
  VcsRecording,
  VcsRecordingArtifact,
  VcsRoom,
  VideoConferencing,
} from './vcs.port.js';

export interface EmbeddedVcsDeps {
  redis: RedisClient;
  /** Redis key of one recording's hash (src/data/redis-keys.ts `vcsRecording`). */
  recordingKey(recordingId: string): string;
  /** Redis key marking a closed room (src/data/redis-keys.ts `vcsClosedRoom`). */
  closedRoomKey(roomName: string): string;
  /** Redis key of a room's removal generations per identity (src/data/redis-keys.ts `vcsRemoved`). */
  removedKey(roomName: string): string;
  /** HS256 key of join tokens. */
  secret: string;
  /** Base URL clients are told to connect to (this service's public URL). */
  publicUrl: string;
  /** Simulated time the media system needs to finalize a recording on stop. */
  finalizeMs?: number;
  tokenTtlSeconds?: number;
}

const ISSUER = 'consult-embedded-vcs';
/** 8 kHz, 8-bit mono: a valid WAV of silence costs 8 kB per recorded second. */
const SAMPLE_RATE = 8000;
const MAX_RECORDING_SECONDS = 600;

/** Room names are deterministic so every node assigns the same room to an event. */
export function roomNameFor(tenant: string, eventId: string): string {
  return `consult-${tenant}-${eventId}`;
}

/**
 * The video conferencing system with no external parts, for development, demos and tests. Rooms
 * are named from (tenant, event); join tokens are JWTs signed with jose; recordings are tracked in
 * Redis so any node may stop what another started. There is no media plane, so a recording's file
 * is a valid WAV of silence as long as the recorded time (capped at ten minutes).
 */
export class EmbeddedVcs implements VideoConferencing {
  readonly provider = 'embedded';
  /**
   * HS256 in node:crypto, synchronous, the key prepared once (fast-jwt, as the access tokens' check,
   * decision 1151): a join signs one, and jose's WebCrypto path imported the key and ran an async job
   * for each (about 4% of a surviving node's CPU in B12's reconnect storm, every victim joining again).
   */
  private readonly sign: (payload: Record<string, unknown>) => string;
  private readonly verifiers = new Map<string, (token: string) => Record<string, unknown>>();

  constructor(private readonly deps: EmbeddedVcsDeps) {
    this.sign = createSigner({ key: deps.secret, algorithm: 'HS256' });
  }

  /** The verifier of one room's tokens (the audience); a handful at a time, the embedded side's check is rare. */
  private verifierFor(roomName: string): (token: string) => Record<string, unknown> {
    let verify = this.verifiers.get(roomName);
    if (!verify) {
      if (this.verifiers.size >= 64) this.verifiers.delete(this.verifiers.keys().next().value!);
      verify = createVerifier({
        key: this.deps.secret,
        algorithms: ['HS256'],
        allowedIss: ISSUER,
        allowedAud: roomName,
        requiredClaims: ['sub', 'exp'],
        cache: false,
      });
      this.verifiers.set(roomName, verify);
    }
    return verify;
  }

  async createRoom(tenant: string, eventId: string): Promise<VcsRoom> {
    const roomName = roomNameFor(tenant, eventId);
    return {
      provider: this.provider,
      roomName,
      url: `${this.deps.publicUrl.replace(/\/$/, '')}/vcs/rooms/${roomName}`,
    };
  }

  async joinDetails(tenant: string, room: VcsRoom, p: VcsParticipant): Promise<VcsJoinDetails> {
    const ttl = this.deps.tokenTtlSeconds ?? 4 * 3600;
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ttl;
    const gen = await this.generation(room.roomName, p.identity);
    const token = this.sign({
      tenant,
      room: room.roomName,
      name: p.name,
      role: p.role,
      gen,
      iss: ISSUER,
      aud: room.roomName,
      sub: p.identity,
      iat,
      exp,
    });
    return { ...room, token, expiresAt: new Date(exp * 1000).toISOString() };
  }

  /** Checks a join token for `roomName`; what the embedded media side would do on connect. */
  async verifyJoinToken(
    token: string,
    roomName: string,
  ): Promise<{ identity: string; tenant: string; role: string; name: string }> {
    try {
      const payload = this.verifierFor(roomName)(token);
      if (await this.deps.redis.exists(this.deps.closedRoomKey(roomName)))
        throw new AppError('token_invalid', 'The room is closed');
      if (Number(payload.gen ?? 0) < (await this.generation(roomName, String(payload.sub))))
        throw new AppError('token_invalid', 'The participant was removed from the room after this token was issued');
      return {
        identity: String(payload.sub),
        tenant: String(payload.tenant),
        role: String(payload.role),
        name: String(payload.name),
      };
    } catch (e) {
      throw new AppError('token_invalid', 'Join token refused', { cause: e });
    }
  }

  async startRecording(tenant: string, room: VcsRoom): Promise<VcsRecording> {
    const recordingId = `emb_${randomUUID().replace(/-/g, '')}`;
    const startedAt = new Date().toISOString();
    await this.deps.redis.hset(this.deps.recordingKey(recordingId), { tenant, room: room.roomName, startedAt });
    return { recordingId, startedAt };
  }

  async stopRecording(tenant: string, room: VcsRoom, recordingId: string): Promise<{ stoppedAt: string }> {
    const key = this.deps.recordingKey(recordingId);
    await this.requireRecording(key, tenant, room);
    if (this.deps.finalizeMs) await sleep(this.deps.finalizeMs);
    await this.deps.redis.hsetnx(key, 'stoppedAt', new Date().toISOString());
    return { stoppedAt: (await this.deps.redis.hget(key, 'stoppedAt'))! };
  }

  /** Marks the room closed for a day (longer than any join token lives): its tokens are refused. */
  async closeRoom(tenant: string, room: VcsRoom): Promise<void> {
    const ttl = Math.max(86_400, this.deps.tokenTtlSeconds ?? 4 * 3600);
    await this.deps.redis.set(this.deps.closedRoomKey(room.roomName), tenant, 'EX', ttl);
  }

  /**
   * Removes one identity: its removal generation goes up, so every token minted before (carrying a lower
   * one) is refused, while a token minted afterwards (a host's admission) carries the new one and works.
   * Kept as long as a closed room's marker, longer than any join token lives.
   */
  async removeParticipant(_tenant: string, room: VcsRoom, identity: string): Promise<void> {
    const key = this.deps.removedKey(room.roomName);
    const ttl = Math.max(86_400, this.deps.tokenTtlSeconds ?? 4 * 3600);
    const replies = await this.deps.redis.multi().hincrby(key, identity, 1).expire(key, ttl).exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (!replies || failed) throw failed ?? new Error('removal transaction aborted');
  }

  /** The identity's removal generation in the room (0 when never removed). */
  private async generation(roomName: string, identity: string): Promise<number> {
    return Number((await this.deps.redis.hget(this.deps.removedKey(roomName), identity)) ?? 0);
  }

  async openRecording(tenant: string, room: VcsRoom, recordingId: string): Promise<VcsRecordingArtifact | null> {
    const rec = await this.requireRecording(this.deps.recordingKey(recordingId), tenant, room);
    if (!rec.stoppedAt) return null;
    const ms = Date.parse(rec.stoppedAt) - Date.parse(rec.startedAt!);
    const seconds = Math.min(MAX_RECORDING_SECONDS, Math.max(1, Math.round(ms / 1000)));
    return { body: silentWav(seconds), contentType: 'audio/wav', fileName: `${room.roomName}-${recordingId}.wav` };
  }

  private async requireRecording(key: string, tenant: string, room: VcsRoom): Promise<Record<string, string>> {
    const rec = await this.deps.redis.hgetall(key);
    if (!rec.startedAt || rec.tenant !== tenant || rec.room !== room.roomName) {
      throw new AppError('not_found', 'No such recording in this room');
    }
    return rec;
  }
}

/** Streams a PCM WAV file of silence in 64 kB chunks. */
export function silentWav(seconds: number): Readable {
  const dataBytes = seconds * SAMPLE_RATE;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(dataBytes, 40);
  function* chunks() {
    yield header;
    const chunk = Buffer.alloc(64 * 1024, 0x80);
    for (let left = dataBytes; left > 0; left -= chunk.length)
      yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }
  return Readable.from(chunks(), { objectMode: false });
}
