// What the client takes from the server's own types (bundled by scripts/generate.mjs into
// src/generated/hub-types.ts): the hub's event maps and the closed list of error codes.
export type {
  ClientToServerEvents,
  ServerToClientEvents,
  AckResult,
  HubMethodName,
  ServerEventName,
} from '../../../src/hub/hub.events.js';
export type { ErrorCode, FieldError, RetryableCode } from '../../../src/kernel/errors.js';
// The meetingEvent types of the recording consent flow (docs/meetings.md, decision 910).
export type { ConsentMeetingEventType } from '../../../src/contracts/meeting.schema.js';
