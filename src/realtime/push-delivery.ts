import type { PushName, PushPayload } from '../contracts/pushes.js';
import type { PushOrigin } from '../data/stores/push-history.store.js';

export type { PushOrigin };

/**
 * How each push is delivered (the table of docs/hub.md#recovering-missed-pushes):
 * - `recoverable`: recorded in each recipient's history (user, device; a meeting room's pushes in the
 *   history of each recipient logically in the meeting) and replayed to a reconnecting client;
 * - `volatile`: presence ticks, heartbeats, signalling, progress ticks: stale by the time a client is back;
 * - `connection`: about one connection (its session, its resumption): a new connection learns the same anew.
 * importProgress is recoverable when it completes or fails, volatile while running.
 */
export const PUSH_DELIVERY: Record<PushName, 'recoverable' | 'volatile' | 'connection'> = {
  onNewCall: 'recoverable',
  onEndCall: 'recoverable',
  onCallUpdated: 'recoverable',
  meetingEvent: 'recoverable',
  waitingRoom: 'recoverable',
  waitingRoomUpdated: 'recoverable',
  removedFromMeeting: 'recoverable',
  muteRequested: 'recoverable',
  hostAccess: 'recoverable',
  recordingConsentRequested: 'recoverable',
  recordingConsentResult: 'recoverable',
  userStatus: 'volatile',
  peripheralStarted: 'recoverable',
  peripheralStopped: 'recoverable',
  deviceInfo: 'volatile',
  deviceUpdated: 'recoverable',
  onRemoteControl: 'recoverable',
  onDeviceAdded: 'recoverable',
  onShareImage: 'recoverable',
  onClearImage: 'recoverable',
  offer: 'volatile',
  answer: 'volatile',
  iceCandidate: 'volatile',
  sayHi: 'volatile',
  sessionEnded: 'connection',
  permissionsChanged: 'connection',
  pinLocked: 'recoverable',
  securityAlert: 'recoverable',
  importProgress: 'recoverable',
  resyncRequired: 'connection',
  pushStreams: 'connection',
};

/** Whether this push is recorded in its recipients' histories (PUSH_DELIVERY, with importProgress by status). */
export function isRecoverable(event: PushName, payload: unknown): boolean {
  if (PUSH_DELIVERY[event] !== 'recoverable') return false;
  if (event === 'importProgress') return (payload as { status?: string } | null)?.status !== 'running';
  return true;
}

/**
 * Sends pushes to rooms (src/realtime/rooms.ts). At-most-once by nature: acknowledged work never relies
 * on a push arriving. Implemented by the hub (Socket.IO rooms through the adapter) and by the Redis push
 * channel (src/realtime/redis-publisher.ts) for processes that run no hub.
 */
export interface PushPublisher {
  /** `origin`: an actor turn's push, recorded once however often it is sent (decision 1133). */
  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>, origin?: PushOrigin): void;
  /**
   * Moves every socket in `rooms` (on every hub node) into `change.join` and out of `change.leave`:
   * how an actor turn admits a waiting client to its meeting room or takes a removed one out of it.
   * At-most-once like pushes, and sent in turn order with them. Optional for publishers that only push.
   */
  move?(rooms: string | string[], change: RoomMove): void;
  /**
   * Resolves once every push and move submitted so far was recorded (in the recipients' histories) and
   * handed on. An actor turn that pushed answers only after it: an acknowledged change's pushes are in
   * the histories before the caller hears of it, so a node killed right after the answer loses none.
   */
  idle?(): Promise<void>;
}

/** A change of room membership for the sockets of some rooms (PushPublisher.move). */
export interface RoomMove {
  join?: string[];
  leave?: string[];
}
