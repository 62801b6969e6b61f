// The call actor's state and messages; what clients send and receive is in src/contracts/call.schema.ts.
import type { Caller } from '../kernel/caller.js';
import type { CallInfo, InitCallRequest } from '../contracts/call.schema.js';

/**
 * The call actor's state (snapshotted by the runtime): the CallInfo clients receive, and who of those in
 * the call was offline at the last presence check (never sent to clients).
 */
export type CallState = CallInfo & { awayIds?: string[] };

/** Messages of the call actor; `caller` is the verified socket principal. */
export type CallMsg =
  | { type: 'init'; caller: Caller; callerName: string; req: InitCallRequest }
  | { type: 'accept'; caller: Caller }
  | { type: 'cancel'; caller: Caller; reason?: string }
  | { type: 'end'; caller: Caller; reason?: string }
  | { type: 'addParticipant'; caller: Caller; userId: string }
  | { type: 'members' }
  | { type: 'ringTimeout' }
  | { type: 'presenceCheck' };
