import type { TenantDb } from '../mongo.js';
import { claimedUpdate } from './transition-claim.js';

export interface LoginCodeRecord {
  code: string;
  pollSecretHash: string;
  status: 'pending' | 'approved' | 'redeemed' | 'refused';
  deviceName?: string | null;
  requestedFrom?: { ip?: string | null; userAgent?: string | null } | null;
  approvedBy?: unknown;
  approvedSessionId?: string | null;
  approvedIdpSid?: string | null;
  /** Absent on codes approved by older code: such a code is not redeemed (its scope is unknown). */
  approvedPermissions?: string[] | null;
  expiresAt: Date;
  extendedCount: number;
  redeemedAt?: Date | null;
  refusedAt?: Date | null;
  createdAt?: Date;
}

/**
 * QR login codes. Every transition is one conditional update (status, poll secret and expiry in the
 * filter), so two pollers or two approvers can never both win.
 */
export class LoginCodeRepository {
  constructor(private readonly db: TenantDb) {}

  async create(c: {
    code: string;
    pollSecretHash: string;
    deviceName?: string;
    requestedFrom?: { ip?: string; userAgent?: string };
    expiresAt: Date;
  }): Promise<void> {
    await this.db.models.LoginCode.create({ ...c, status: 'pending', extendedCount: 0 });
  }

  /** Housekeeping without TTL indexes: drops codes that expired before `before`. */
  async purgeExpired(before: Date): Promise<number> {
    return (await this.db.models.LoginCode.deleteMany({ expiresAt: { $lt: before } })).deletedCount;
  }

  findByCode(code: string): Promise<LoginCodeRecord | null> {
    return this.db.models.LoginCode.findOne({ code }).lean<LoginCodeRecord>().exec();
  }

  /**
   * Pending -> approved, for one caller only (through a claim on FerretDB, transition-claim.ts). Approval
   * and refusal share the claim key, so a code is never both approved and refused.
   */
  approve(
    code: string,
    by: { userId: string; sessionId?: string; idpSid?: string; permissions: string[] },
    now: Date,
  ): Promise<LoginCodeRecord | null> {
    return claimedUpdate<LoginCodeRecord>(
      this.db,
      this.db.models.LoginCode,
      `${code}:decide`,
      { code, status: 'pending', expiresAt: { $gt: now } },
      {
        $set: {
          status: 'approved',
          approvedBy: by.userId,
          approvedSessionId: by.sessionId,
          approvedIdpSid: by.idpSid,
          approvedPermissions: by.permissions,
        },
      },
    );
  }

  /** Pending -> refused by a signed-in user: final, the device's poll then answers `login_code_refused`. */
  refuse(code: string, now: Date): Promise<LoginCodeRecord | null> {
    return claimedUpdate<LoginCodeRecord>(
      this.db,
      this.db.models.LoginCode,
      `${code}:decide`,
      { code, status: 'pending', expiresAt: { $gt: now } },
      { $set: { status: 'refused', refusedAt: now } },
    );
  }

  /** Approved -> redeemed: single use even under concurrent polls (through a claim on FerretDB). */
  redeem(code: string, pollSecretHash: string, now: Date): Promise<LoginCodeRecord | null> {
    return claimedUpdate<LoginCodeRecord>(
      this.db,
      this.db.models.LoginCode,
      `${code}:redeem`,
      { code, pollSecretHash, status: 'approved', expiresAt: { $gt: now } },
      { $set: { status: 'redeemed', redeemedAt: now } },
    );
  }

  extend(
    code: string,
    pollSecretHash: string,
    expiresAt: Date,
    now: Date,
    maxExtensions: number,
  ): Promise<LoginCodeRecord | null> {
    return this.db.models.LoginCode.findOneAndUpdate(
      { code, pollSecretHash, status: 'pending', expiresAt: { $gt: now }, extendedCount: { $lt: maxExtensions } },
      { $set: { expiresAt }, $inc: { extendedCount: 1 } },
      { returnDocument: 'after' },
    )
      .lean<LoginCodeRecord>()
      .exec();
  }
}
