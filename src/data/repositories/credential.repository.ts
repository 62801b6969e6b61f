import { isValidObjectId } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import { sortKeys } from '../models/user.model.js';

/** The fields of a user that sign-in and authorization need. */
export interface AccountRecord {
  _id: { toString(): string };
  username: string;
  idpSubject: string;
  displayName: string;
  email?: string | null;
  kind: 'person' | 'device';
  role: string;
  status: 'active' | 'pending' | 'disabled';
  passwordHash?: string | null;
  pinHash?: string | null;
  pinHistory?: string[];
}

export interface SecurityRules {
  pin: { minLength: number; maxLength: number; digitsOnly: boolean; historyCount: number };
  /**
   * PIN lockout: `maxAttempts` failures from one client address lock that address for `lockoutSeconds`,
   * doubled for each further lock of the day up to `maxLockoutSeconds`; `maxFailuresPerDay` failures of
   * the account from all addresses lock PIN sign-in until the PIN is reset (docs/decisions/131).
   */
  lockout: { maxAttempts: number; lockoutSeconds: number; maxLockoutSeconds: number; maxFailuresPerDay: number };
  session: {
    accessTokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    offlineTokenTtlDays: number;
    maxSessionsPerUser: number;
  };
  loginCodeTtlSeconds: number;
}

const FIELDS = {
  username: 1,
  idpSubject: 1,
  displayName: 1,
  email: 1,
  kind: 1,
  role: 1,
  status: 1,
  passwordHash: 1,
  pinHash: 1,
  pinHistory: 1,
};

/** Credential reads and writes on users (password and PIN hashes, role) and the tenant's security rules. */
export class CredentialRepository {
  constructor(private readonly db: TenantDb) {}

  findById(id: string): Promise<AccountRecord | null> {
    if (!isValidObjectId(id)) return Promise.resolve(null);
    return this.db.models.User.findById(id).select(FIELDS).lean<AccountRecord>().exec();
  }

  findByUsername(username: string): Promise<AccountRecord | null> {
    return this.db.models.User.findOne({ username: username.toLowerCase().trim() })
      .select(FIELDS)
      .lean<AccountRecord>()
      .exec();
  }

  /** Ids of active users holding one of `roles` (at most `limit`): who an administrators' alert goes to. */
  async activeIdsWithRoles(roles: string[], limit: number): Promise<string[]> {
    if (!roles.length) return [];
    const rows = await this.db.models.User.find({ role: { $in: roles }, status: 'active' })
      .select({ _id: 1 })
      .limit(limit)
      .lean<{ _id: { toString(): string } }[]>()
      .exec();
    return rows.map((r) => r._id.toString());
  }

  findBySubject(subject: string): Promise<AccountRecord | null> {
    return this.db.models.User.findOne({ idpSubject: subject }).select(FIELDS).lean<AccountRecord>().exec();
  }

  async setPin(id: string, pinHash: string | null, history: string[]): Promise<void> {
    await this.db.models.User.updateOne(
      { _id: id },
      pinHash
        ? { $set: { pinHash, pinHistory: history, pinSetAt: new Date() } }
        : { $unset: { pinHash: 1, pinSetAt: 1 } },
    );
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.db.models.User.updateOne({ _id: id }, { $set: { passwordHash } });
  }

  async setRole(id: string, role: string): Promise<boolean> {
    const r = await this.db.models.User.updateOne({ _id: id }, { $set: { role } });
    if (r.matchedCount === 1) await this.db.usersChanged([id]);
    return r.matchedCount === 1;
  }

  /** Creates a user for provisioning and tests; the directory owner manages profiles otherwise. */
  async create(u: {
    username: string;
    displayName: string;
    role: string;
    kind?: 'person' | 'device';
    passwordHash?: string;
    email?: string;
    idpSubject?: string;
  }): Promise<string> {
    const username = u.username.toLowerCase().trim();
    const doc = await this.db.models.User.create({
      ...u,
      username,
      idpSubject: u.idpSubject ?? username,
      status: 'active',
      ...sortKeys(u.displayName, username),
    });
    await this.db.usersChanged([doc._id.toString()]);
    return doc._id.toString();
  }

  /** Binds an account waiting for its first identity-provider sign-in to the subject; one binding wins. */
  async bindSubject(id: string, from: string, to: string): Promise<boolean> {
    const r = await this.db.models.User.updateOne({ _id: id, idpSubject: from }, { $set: { idpSubject: to } });
    return r.modifiedCount === 1;
  }

  async securityRules(): Promise<SecurityRules | null> {
    const s = await this.db.models.TenantConfig.findById('tenant')
      .select({ security: 1 })
      .lean<{ security?: SecurityRules }>()
      .exec();
    return s?.security ?? null;
  }
}
