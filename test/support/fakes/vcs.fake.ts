import { randomUUID } from 'node:crypto';
import { AppError } from '../../../src/kernel/errors.js';
import { roomNameFor, silentWav } from '../../../src/vcs/embedded.adapter.js';
import type {
  VcsJoinDetails,
  VcsParticipant,
  VcsRecording,
  VcsRecordingArtifact,
  VcsRoom,
  VideoConferencing,
} from '../../../src/vcs/vcs.port.js';

interface IssuedToken {
  tenant: string;
  roomName: string;
  participant: VcsParticipant;
  generation: number;
}

/**
 * The video conferencing port in memory, with the embedded adapter's rules (src/vcs/embedded.adapter.ts):
 * rooms named from (tenant, event), idempotent; a closed room refuses every join token; removing an
 * identity refuses the tokens it was given before, not those given after; a recording stops once.
 * `closed` and `removals` are what a test reads to see what a service asked of the system.
 */
export class FakeVcs implements VideoConferencing {
  readonly provider = 'embedded';
  readonly closed = new Set<string>();
  /** Each removal asked for, in order. */
  readonly removals: { roomName: string; identity: string }[] = [];
  private readonly tokens = new Map<string, IssuedToken>();
  private readonly generations = new Map<string, number>();
  private readonly recordings = new Map<
    string,
    { tenant: string; roomName: string; startedAt: string; stoppedAt?: string }
  >();

  constructor(private readonly publicUrl = 'http://consult.test') {}

  private generation(roomName: string, identity: string): number {
    return this.generations.get(`${roomName}\u0000${identity}`) ?? 0;
  }

  async createRoom(tenant: string, eventId: string): Promise<VcsRoom> {
    const roomName = roomNameFor(tenant, eventId);
    return { provider: this.provider, roomName, url: `${this.publicUrl}/vcs/rooms/${roomName}` };
  }

  async joinDetails(tenant: string, room: VcsRoom, participant: VcsParticipant): Promise<VcsJoinDetails> {
    const token = randomUUID();
    const generation = this.generation(room.roomName, participant.identity);
    this.tokens.set(token, { tenant, roomName: room.roomName, participant: { ...participant }, generation });
    return { ...room, token, expiresAt: new Date(Date.now() + 4 * 3600_000).toISOString() };
  }

  /** What the media side does on connect (EmbeddedVcs.verifyJoinToken): refuses a closed room and a removed identity. */
  async verifyJoinToken(
    token: string,
    roomName: string,
  ): Promise<{ identity: string; tenant: string; role: string; name: string }> {
    const t = this.tokens.get(token);
    if (
      !t ||
      t.roomName !== roomName ||
      this.closed.has(roomName) ||
      t.generation < this.generation(roomName, t.participant.identity)
    )
      throw new AppError('token_invalid', 'Join token refused');
    return { identity: t.participant.identity, tenant: t.tenant, role: t.participant.role, name: t.participant.name };
  }

  async startRecording(tenant: string, room: VcsRoom): Promise<VcsRecording> {
    const recordingId = `emb_${randomUUID().replace(/-/g, '')}`;
    const startedAt = new Date().toISOString();
    this.recordings.set(recordingId, { tenant, roomName: room.roomName, startedAt });
    return { recordingId, startedAt };
  }

  private recording(tenant: string, room: VcsRoom, recordingId: string) {
    const r = this.recordings.get(recordingId);
    if (!r || r.tenant !== tenant || r.roomName !== room.roomName)
      throw new AppError('not_found', 'No such recording in this room');
    return r;
  }

  async stopRecording(tenant: string, room: VcsRoom, recordingId: string): Promise<{ stoppedAt: string }> {
    const r = this.recording(tenant, room, recordingId);
    r.stoppedAt ??= new Date().toISOString();
    return { stoppedAt: r.stoppedAt };
  }

  async closeRoom(_tenant: string, room: VcsRoom): Promise<void> {
    this.closed.add(room.roomName);
  }

  async removeParticipant(_tenant: string, room: VcsRoom, identity: string): Promise<void> {
    this.removals.push({ roomName: room.roomName, identity });
    this.generations.set(`${room.roomName}\u0000${identity}`, this.generation(room.roomName, identity) + 1);
  }

  async openRecording(tenant: string, room: VcsRoom, recordingId: string): Promise<VcsRecordingArtifact | null> {
    const r = this.recording(tenant, room, recordingId);
    if (!r.stoppedAt) return null;
    const ms = Date.parse(r.stoppedAt) - Date.parse(r.startedAt);
    const seconds = Math.min(600, Math.max(1, Math.round(ms / 1000)));
    return { body: silentWav(seconds), contentType: 'audio/wav', fileName: `${room.roomName}-${recordingId}.wav` };
  }
}
