import type { Readable } from 'node:stream';

/**
 * Port to the video conferencing system (VCS). Adapters: embedded (no external system; drives the
 * telemetry flow in tests) and LiveKit (server SDK, join tokens minted locally).
 */
export interface VcsRoom {
  provider: string;
  roomName: string;
  /** Where clients connect (the adapter's media server URL). */
  url: string;
}

export interface VcsParticipant {
  /** Stable identity in the room: the user id, or `device:<id>` / `guest:<id>`. */
  identity: string;
  name: string;
  role: 'host' | 'participant' | 'guest' | 'device';
}

/** What a client needs to join a room (part of JoinResponse and MeetingData). */
export interface VcsJoinDetails extends VcsRoom {
  token: string;
  expiresAt: string;
}

/** A finished recording's bytes, streamed (never held whole in memory). */
export interface VcsRecordingArtifact {
  body: Readable;
  contentType: string;
  fileName: string;
}

export interface VcsRecording {
  recordingId: string;
  startedAt: string;
}

export interface VideoConferencing {
  readonly provider: string;
  /** Assigns (or returns the already assigned) room for an event; idempotent per (tenant, eventId). */
  createRoom(tenant: string, eventId: string): Promise<VcsRoom>;
  joinDetails(tenant: string, room: VcsRoom, participant: VcsParticipant): Promise<VcsJoinDetails>;
  startRecording(tenant: string, room: VcsRoom): Promise<VcsRecording>;
  /** Idempotent: stopping an already stopped recording returns the first stop time. */
  stopRecording(tenant: string, room: VcsRoom, recordingId: string): Promise<{ stoppedAt: string }>;
  /**
   * Closes the room for everyone (endMeeting): participants are disconnected and join tokens for it are
   * refused from then on. Idempotent: closing a closed or unknown room succeeds.
   */
  closeRoom(tenant: string, room: VcsRoom): Promise<void>;
  /**
   * Takes one participant out of the room (removeParticipant, decision 961): they are disconnected and
   * the join tokens issued to that identity for this room before the call are refused from then on; a
   * token issued after it (a host admitted them again) works. Idempotent: removing someone who is not
   * connected, or from a closed or unknown room, succeeds.
   */
  removeParticipant(tenant: string, room: VcsRoom, identity: string): Promise<void>;
  /** The stopped recording's file, or null while the system is still finalizing it. */
  openRecording(tenant: string, room: VcsRoom, recordingId: string): Promise<VcsRecordingArtifact | null>;
}
