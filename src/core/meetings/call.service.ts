import { Types } from 'mongoose';
import type { UserRepository } from '../../data/repositories/user.repository.js';
import type { CallRecordRepository, CallRecordWrite } from '../../data/repositories/call-record.repository.js';

export interface CallServiceDeps {
  users: (tenant: string) => Pick<UserRepository, 'existingActiveIds'>;
  calls: (tenant: string) => Pick<CallRecordRepository, 'save' | 'statusOf'>;
}

/** What the call actor needs from storage: who can be rung, and the call's record in the call history. */
export class CallService {
  constructor(private readonly deps: CallServiceDeps) {}

  /** The ids among `ids` that are active users of the tenant (others cannot be rung). */
  activeUserIds(tenant: string, ids: readonly string[]): Promise<Set<string>> {
    return this.deps.users(tenant).existingActiveIds(ids.map((id) => new Types.ObjectId(id)));
  }

  /** Writes the call's record under the actor's shard epoch; false when a newer owner wrote it (fenced). */
  record(tenant: string, call: CallRecordWrite, epoch: number): Promise<boolean> {
    return this.deps.calls(tenant).save(call, epoch);
  }

  /** The status the call's record holds, none when the call was never recorded. */
  recordedStatus(tenant: string, callId: string): Promise<CallRecordWrite['status'] | undefined> {
    return this.deps.calls(tenant).statusOf(callId);
  }
}
