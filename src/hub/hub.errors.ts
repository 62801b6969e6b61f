import type { ErrorCode } from '../kernel/errors.js';
import type { HubMethodName } from './hub.events.js';

/**
 * The error codes a hub method's negative ack can carry, by method: what docs/asyncapi.yaml lists
 * under each operation's reply. Grouped by the code that can throw them; the sync test
 * (test/integration/hub/hub-docs.test.ts) scans those source files and fails when one of them throws a
 * code its methods do not list, so the document cannot fall behind the code.
 */
export const HUB_ERROR_GROUPS = {
  /** The dispatcher (src/hub/method.ts): rate limit, live session, permission, argument validation, anything unexpected. */
  dispatch: {
    files: ['src/hub/method.ts', 'src/hub/socket-rate-limit.ts'],
    codes: ['rate_limited', 'token_expired', 'permission_denied', 'validation_failed', 'internal'],
  },
  /** Asking an actor (src/actors/runtime): its owner moved, could not be reached or did not answer in time (transient: retry). */
  actors: {
    files: [
      'src/actors/runtime/ask-loop.ts',
      'src/actors/runtime/transport.ts',
      'src/actors/runtime/turn-context.ts',
      'src/actors/runtime/actor-system.ts',
      'src/actors/runtime/activation.ts',
      'src/actors/runtime/fenced-write.ts',
    ],
    codes: ['not_owner', 'service_unavailable', 'timeout', 'bad_request'],
  },
  call: {
    files: ['src/hub/handlers/call.handlers.ts', 'src/actors/call.actor.ts'],
    codes: [
      'call_not_found',
      'user_not_found',
      'conflict',
      'forbidden',
      'invalid_state',
      'validation_failed',
      'bad_request',
    ],
  },
  meeting: {
    files: ['src/hub/handlers/meeting.handlers.ts', 'src/actors/meeting/meeting.actor.ts'],
    codes: ['meeting_not_found', 'event_not_found', 'forbidden', 'invalid_state', 'bad_request'],
  },
  /** The waiting room and host controls of the meeting actor (decision 870). */
  waitingRoom: {
    files: ['src/actors/meeting/meeting-state.ts', 'src/actors/meeting/meeting-waiting.ts'],
    codes: ['meeting_not_found', 'not_meeting_host', 'waiting_entry_not_found'],
  },
  /** Host controls of the meeting actor (decision 900). */
  hostControls: {
    files: ['src/actors/meeting/meeting-controls.ts'],
    codes: [
      'invalid_state',
      'meeting_locked',
      'participant_not_found',
      'host_request_not_found',
      'host_not_eligible',
      'bad_request',
      'forbidden',
    ],
  },
  /** Recording consent in the meeting actor and the recording service's gate (decision 910). */
  recordingConsent: {
    files: [
      'src/actors/meeting/meeting-consent.ts',
      'src/core/meetings/recording.service.ts',
      'src/core/meetings/recording-consent.service.ts',
    ],
    codes: [
      'consent_request_not_found',
      'consent_not_required',
      'consent_already_given',
      'recording_consent_required',
      'invalid_state',
      'event_not_found',
      'user_not_found',
      'service_unavailable',
    ],
  },
  shareImage: { files: ['src/core/media/share-image.ts'], codes: ['file_not_found', 'url_not_allowed'] },
  joinCode: {
    files: ['src/core/meetings/meeting.service.ts'],
    codes: [
      'meeting_not_found',
      'event_not_found',
      'device_not_found',
      'forbidden',
      'permission_denied',
      'invalid_state',
    ],
  },
  device: {
    files: ['src/hub/handlers/device.handlers.ts', 'src/actors/device.actor.ts'],
    codes: ['device_not_found', 'conflict', 'forbidden', 'invalid_state', 'bad_request', 'event_not_found'],
  },
  signalling: { files: ['src/hub/handlers/signalling.handlers.ts'], codes: ['forbidden'] },
  /** refreshToken: the token is verified like at the handshake, then must be the same user's and not older. */
  session: {
    files: [
      'src/hub/handlers/session.handlers.ts',
      'src/hub/hub.session.ts',
      'src/auth/access-token-verifier.ts',
      'src/auth/internal-tokens.ts',
      'src/auth/revocations.ts',
    ],
    codes: ['token_invalid', 'token_expired', 'session_revoked', 'wrong_tenant', 'forbidden'],
  },
  /** resume: only the connection's own streams (docs/hub.md#recovering-missed-pushes). */
  resume: {
    files: ['src/hub/hub.resume.ts'],
    codes: ['forbidden', 'service_unavailable'],
  },
} as const satisfies Record<string, { files: readonly string[]; codes: readonly ErrorCode[] }>;

export type HubErrorGroup = keyof typeof HUB_ERROR_GROUPS;

const M = ['meeting'] as const;
const D = ['device', 'meeting'] as const;

/** Which groups each method goes through, besides the dispatcher (every method). */
export const HUB_METHOD_GROUPS: Record<HubMethodName, readonly HubErrorGroup[]> = {
  initEvent: ['actors', ...M, 'hostControls'],
  joinEvent: ['actors', ...M, 'waitingRoom', 'joinCode', 'hostControls', 'recordingConsent'],
  getMeetingDetails: ['actors', ...M],
  notify: ['actors', ...M],
  startRecording: ['actors', ...M, 'recordingConsent'],
  stopRecording: ['actors', ...M],
  requestHostAccess: ['actors', ...M, 'hostControls'],
  clearImage: ['actors', ...M],
  shareImage: ['actors', ...M, 'shareImage'],
  initCall: ['actors', 'call'],
  acceptCall: ['actors', 'call'],
  cancelCall: ['actors', 'call'],
  endCall: ['actors', 'call'],
  addParticipant: ['actors', 'call'],
  // A headset's join is the meeting actor's join (decision 1010): waiting room, lock and bar apply.
  initRapidConnect: ['actors', ...D, 'joinCode', 'waitingRoom', 'hostControls'],
  addDeviceToEvent: ['actors', ...D, 'joinCode', 'waitingRoom', 'hostControls'],
  deviceStatus: ['actors', ...D],
  startPeripheral: ['actors', ...D],
  stopPeripheral: ['actors', ...D],
  requestRemote: ['actors', ...D],
  remoteControl: ['actors', ...D],
  joinRoom: ['joinCode', 'signalling'],
  sayHiToRoom: ['joinCode', 'signalling'],
  offer: ['actors', 'call', 'meeting', 'signalling'],
  answer: ['actors', 'call', 'meeting', 'signalling'],
  iceCandidate: ['actors', 'call', 'meeting', 'signalling'],
  refreshToken: ['session'],
  resume: ['resume'],
  admit: ['actors', ...M, 'waitingRoom', 'joinCode'],
  deny: ['actors', ...M, 'waitingRoom'],
  getWaitingRoom: ['actors', ...M, 'waitingRoom'],
  removeParticipant: ['actors', ...M, 'waitingRoom', 'hostControls'],
  endMeeting: ['actors', ...M, 'waitingRoom', 'hostControls'],
  lockMeeting: ['actors', ...M, 'waitingRoom', 'hostControls'],
  unlockMeeting: ['actors', ...M, 'waitingRoom', 'hostControls'],
  transferHost: ['actors', ...M, 'waitingRoom', 'hostControls'],
  addHost: ['actors', ...M, 'waitingRoom', 'hostControls'],
  muteRequest: ['actors', ...M, 'waitingRoom', 'hostControls'],
  answerHostAccess: ['actors', ...M, 'waitingRoom', 'hostControls'],
  consentToRecording: ['actors', ...M, 'recordingConsent', 'waitingRoom', 'joinCode'],
};

/** The sorted, distinct codes of a method's negative ack. */
export function hubMethodErrors(name: HubMethodName): ErrorCode[] {
  const groups: HubErrorGroup[] = ['dispatch', ...HUB_METHOD_GROUPS[name]];
  return [...new Set(groups.flatMap((g) => HUB_ERROR_GROUPS[g].codes as readonly ErrorCode[]))].sort();
}
