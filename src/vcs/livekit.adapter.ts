import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { EgressClient, RoomServiceClient, VideoGrant } from 'livekit-server-sdk';
import { AppError } from '../kernel/errors.js';
import { roomNameFor } from './embedded.adapter.js';
import type {
  VcsJoinDetails,
  VcsParticipant,
  VcsRecording,
  VcsRecordingArtifact,
  VcsRoom,
  VideoConferencing,
} from './vcs.port.js';

export interface LiveKitOptions {
  /** The LiveKit server, e.g. wss://media.example.org (its HTTP API is the same host). */
  url: string;
  apiKey: string;
  apiSecret: string;
  tokenTtlSeconds?: number;
  /** Minutes an empty room lingers before LiveKit closes it. */
  emptyTimeoutSeconds?: number;
  /** Injected for tests of file retrieval; defaults to global fetch. */
  fetch?: typeof fetch;
}

/** What each participant role may do in a room; hosts administer and record. */
export function grantFor(roomName: string, role: VcsParticipant['role']): VideoGrant {
  return {
    room: roomName,
    roomJoin: true,
    canSubscribe: true,
    canPublish: true,
    canPublishData: true,
    roomAdmin: role === 'host',
    roomRecord: role === 'host',
  };
}

/**
 * LiveKit through its server SDK. Join tokens are minted locally (no network); rooms are created
 * with RoomServiceClient, and recordings are room-composite egresses written by LiveKit's egress
 * to its configured file storage, fetched back from the location it reports.
 */
export class LiveKitVcs implements VideoConferencing {
  readonly provider = 'livekit';
  private readonly httpUrl: string;
  private clients?: Promise<{
    sdk: typeof import('livekit-server-sdk');
    rooms: RoomServiceClient;
    egress: EgressClient;
  }>;

  constructor(private readonly opts: LiveKitOptions) {
    this.httpUrl = opts.url.replace(/^ws(s?):\/\//, 'http$1://');
  }

  /** The SDK (about 19 MiB resident) is loaded with the first call, so nodes on the embedded adapter never carry it. */
  private sdk() {
    this.clients ??= import('livekit-server-sdk').then((sdk) => ({
      sdk,
      rooms: new sdk.RoomServiceClient(this.httpUrl, this.opts.apiKey, this.opts.apiSecret),
      egress: new sdk.EgressClient(this.httpUrl, this.opts.apiKey, this.opts.apiSecret),
    }));
    return this.clients;
  }

  async createRoom(tenant: string, eventId: string): Promise<VcsRoom> {
    const roomName = roomNameFor(tenant, eventId);
    await (
      await this.sdk()
    ).rooms.createRoom({
      name: roomName,
      emptyTimeout: this.opts.emptyTimeoutSeconds ?? 600,
      metadata: JSON.stringify({ tenant, eventId }),
    });
    return { provider: this.provider, roomName, url: this.opts.url };
  }

  async joinDetails(tenant: string, room: VcsRoom, p: VcsParticipant): Promise<VcsJoinDetails> {
    const ttl = this.opts.tokenTtlSeconds ?? 4 * 3600;
    const { sdk } = await this.sdk();
    const at = new sdk.AccessToken(this.opts.apiKey, this.opts.apiSecret, {
      identity: p.identity,
      name: p.name,
      ttl,
      metadata: JSON.stringify({ tenant, role: p.role }),
    });
    at.addGrant(grantFor(room.roomName, p.role));
    const token = await at.toJwt();
    return { ...room, url: this.opts.url, token, expiresAt: new Date(Date.now() + ttl * 1000).toISOString() };
  }

  async startRecording(tenant: string, room: VcsRoom): Promise<VcsRecording> {
    const { sdk, egress } = await this.sdk();
    const output = new sdk.EncodedFileOutput({ filepath: `recordings/${tenant}/${room.roomName}/{time}.mp4` });
    const info = await egress.startRoomCompositeEgress(room.roomName, { file: output });
    return { recordingId: info.egressId, startedAt: new Date().toISOString() };
  }

  async stopRecording(_tenant: string, room: VcsRoom, recordingId: string): Promise<{ stoppedAt: string }> {
    const info = await this.findEgress(room, recordingId);
    if (!info.endedAt)
      await (await this.sdk()).egress.stopEgress(recordingId).catch((e) => this.ignoreAlreadyStopped(e));
    const ended = info.endedAt ? Number(info.endedAt / 1_000_000n) : Date.now();
    return { stoppedAt: new Date(ended).toISOString() };
  }

  /** Deletes the LiveKit room: every participant is disconnected. A room already gone is closed. */
  async closeRoom(_tenant: string, room: VcsRoom): Promise<void> {
    await (await this.sdk()).rooms.deleteRoom(room.roomName).catch((e) => this.ignoreMissingRoom(e));
  }

  /**
   * RoomService RemoveParticipant: LiveKit disconnects the identity and, on servers that honour
   * `revokeTokenTs`, refuses its tokens whose not-before is earlier than this second (tokens are minted
   * with not-before = now, so a token minted for a later admission works). The timestamp is given
   * explicitly: left out, the server would revoke a minute ahead and refuse that admission's token too.
   * Someone no longer connected (or a room already gone) is removed already.
   */
  async removeParticipant(_tenant: string, room: VcsRoom, identity: string): Promise<void> {
    const revokeTokenTs = BigInt(Math.floor(Date.now() / 1000));
    await (
      await this.sdk()
    ).rooms
      .removeParticipant(room.roomName, identity, { revokeTokenTs })
      .catch((e) => this.ignoreMissingRoom(e));
  }

  async openRecording(_tenant: string, room: VcsRoom, recordingId: string): Promise<VcsRecordingArtifact | null> {
    const info = await this.findEgress(room, recordingId);
    const file = info.fileResults[0];
    if (!file?.location) return null;
    const res = await (this.opts.fetch ?? fetch)(file.location);
    if (!res.ok || !res.body)
      throw new AppError('service_unavailable', `Recording file not retrievable (${res.status})`, { retryAfter: 10 });
    return {
      body: Readable.fromWeb(res.body as unknown as WebReadableStream),
      contentType: res.headers.get('content-type') ?? 'video/mp4',
      fileName: file.filename.split('/').pop() || `${recordingId}.mp4`,
    };
  }

  private async findEgress(room: VcsRoom, egressId: string) {
    const [info] = await (await this.sdk()).egress.listEgress({ egressId });
    if (!info || info.roomName !== room.roomName) throw new AppError('not_found', 'No such recording in this room');
    return info;
  }

  /** LiveKit answers 404 (TwirpError not_found) for a room, or a participant, that no longer exists. */
  private ignoreMissingRoom(e: unknown): void {
    const err = e as { status?: number; code?: string; message?: string };
    if (err?.status === 404 || err?.code === 'not_found' || /not.?found|does not exist/i.test(String(err?.message)))
      return;
    throw e;
  }

  private ignoreAlreadyStopped(e: unknown): void {
    if (/cannot be stopped|already|EGRESS_COMPLETE|EGRESS_ENDING/i.test(String((e as Error)?.message))) return;
    throw e;
  }
}
