// The host controls' part of the meeting actor's state and messages; what clients send and receive is in
// src/contracts/meeting-controls.schema.ts.
import type { Caller } from '../../kernel/caller.js';

/** Who changed a control and when (state of the meeting actor). */
export interface ControlMark {
  by: string;
  at: string;
}

/** The host controls' part of the meeting actor's state (absent in snapshots written before them). */
export interface MeetingControlsState {
  /** Locked: new joins wait (with a waiting room) or are refused with meeting_locked. */
  locked?: ControlMark;
  /** Ended for everyone: nobody joins again; the event is `ended`. */
  ended?: ControlMark & { reason?: string };
  /** Host role given or taken in this meeting, overriding the event's (transferHost, addHost, answerHostAccess). */
  roleGrants?: Record<string, ControlMark & { role: 'host' | 'participant' }>;
  /** Pending requestHostAccess, by requester. */
  hostRequests?: Record<string, { since: string }>;
}

export type MeetingControlMsg =
  | { type: 'removeParticipant'; caller: Caller; userId: string; reason?: string }
  | { type: 'endMeeting'; caller: Caller; reason?: string }
  | { type: 'lockMeeting'; caller: Caller }
  | { type: 'unlockMeeting'; caller: Caller }
  | { type: 'transferHost'; caller: Caller; userId: string }
  | { type: 'addHost'; caller: Caller; userId: string }
  | { type: 'muteRequest'; caller: Caller; userId: string; media: 'audio' | 'video' | 'both'; message?: string }
  | { type: 'answerHostAccess'; caller: Caller; userId: string; grant: boolean; message?: string };

export type MeetingControlName = MeetingControlMsg['type'];
