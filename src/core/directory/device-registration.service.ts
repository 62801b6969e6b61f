import { createHash, randomInt } from 'node:crypto';
import type { Types } from 'mongoose';
import { z } from 'zod';
import type { Principal } from '../../kernel/principal.js';
import type {
  DeviceRegistrationRecord,
  DeviceRegistrationRepository,
} from '../../data/repositories/device-registration.repository.js';
import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';

const HardwareId = z.string().trim().min(1).max(200);
/** Body of POST /api/peripheral/registrations. */
export const RegisterDeviceCommand = z.strictObject({ hardwareId: HardwareId, accountId: z.string().min(1) });
/** Body of POST /api/peripheral/registrations/delete. */
export const UnregisterDeviceCommand = z.strictObject({ hardwareId: HardwareId });
/** Body of POST /api/peripheral/pairingCode (the device asks for the code it shows). */
export const PairingCodeCommand = z.strictObject({ hardwareId: HardwareId });
/** Body of POST /api/peripheral/pair (a signed-in clinician or administrator enters the shown code). */
export const PairDeviceCommand = z.strictObject({ pairingCode: z.string().trim().min(4).max(32) });

/** Letters and digits a person reads off a headset without confusing them (no 0/O, 1/I/L). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
const PAIRING_TTL_MS = 10 * 60_000;

const ADMIN = 'tenant:admin';

export interface DeviceRegistrationDeps {
  registrations: (tenant: string) => DeviceRegistrationRepository;
  audit?: AuditRecorder;
}

/**
 * Who may speak for a hardware id (decision 1041). A device account claims a hardware id in
 * `initRapidConnect` only when it is registered to that account: by an administrator over REST, or by
 * pairing (the device shows a code, a signed-in clinician or administrator enters it). Administrators
 * may claim without one (they can register any id anyway).
 */
export class DeviceRegistrationService {
  constructor(private readonly deps: DeviceRegistrationDeps) {}

  /** Refuses `forbidden` unless one of `ids` is registered to the caller (or the caller is an administrator). */
  async assertMayClaim(p: Principal, ids: readonly string[]): Promise<void> {
    if (p.permissions.has(ADMIN)) return;
    const held = await this.deps.registrations(p.tenant).findAny(ids);
    if (held.some((r) => r.accountId === p.userId)) return;
    throw new AppError(
      'forbidden',
      held.length
        ? 'This hardware id is registered to another device account'
        : 'This hardware id is not registered to this device account: an administrator registers it, or pair it (POST /api/peripheral/pairingCode)',
    );
  }

  async register(p: Principal, cmd: z.infer<typeof RegisterDeviceCommand>): Promise<DeviceRegistrationRecord> {
    const repo = this.deps.registrations(p.tenant);
    const account = oid(cmd.accountId, 'user_not_found');
    if (!(await repo.isDeviceAccount(account)))
      throw new AppError('validation_failed', 'accountId: must be a device account of this tenant', {
        errors: [{ field: 'accountId', message: 'must be a device account of this tenant' }],
      });
    return this.bind(p, cmd.hardwareId, account, 'admin');
  }

  async unregister(p: Principal, cmd: z.infer<typeof UnregisterDeviceCommand>): Promise<void> {
    if (!(await this.deps.registrations(p.tenant).remove(cmd.hardwareId)))
      throw new AppError('device_not_found', `No registration of ${cmd.hardwareId}`);
    await recordBy(this.deps.audit, p, 'device.unregister', { details: { hardwareId: cmd.hardwareId } });
  }

  list(p: Principal): Promise<DeviceRegistrationRecord[]> {
    return this.deps.registrations(p.tenant).list(1000);
  }

  /**
   * A device account asks for the code it shows on its screen: valid 10 minutes, once, stored only as
   * its hash. A hardware id already registered to the caller answers `registered` and no code; one of
   * another account is `conflict`.
   */
  async pairingCode(
    p: Principal,
    cmd: z.infer<typeof PairingCodeCommand>,
  ): Promise<{ registered: true } | { registered: false; pairingCode: string; expiresAt: Date }> {
    const repo = this.deps.registrations(p.tenant);
    const [held] = await repo.findAny([cmd.hardwareId]);
    if (held?.accountId === p.userId) return { registered: true };
    if (held) throw new AppError('conflict', 'This hardware id is registered to another device account');
    const code = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    const expiresAt = new Date(Date.now() + PAIRING_TTL_MS);
    await repo.createPairing(hashCode(code), cmd.hardwareId, oid(p.userId, 'user_not_found'), expiresAt);
    return { registered: false, pairingCode: code, expiresAt };
  }

  /** A signed-in clinician or administrator enters the code a device shows: the device's hardware id is registered to it. */
  async pair(p: Principal, cmd: z.infer<typeof PairDeviceCommand>): Promise<DeviceRegistrationRecord> {
    const code = cmd.pairingCode.toUpperCase().replace(/[\s-]/g, '');
    const pairing = await this.deps.registrations(p.tenant).takePairing(hashCode(code), new Date());
    if (!pairing) throw new AppError('not_found', 'No such pairing code (or it expired): ask the device for a new one');
    return this.bind(p, pairing.hardwareId, pairing.accountId, 'pairing');
  }

  private async bind(p: Principal, hardwareId: string, account: Types.ObjectId, via: 'admin' | 'pairing') {
    const held = await this.deps
      .registrations(p.tenant)
      .register(hardwareId, account, via, oid(p.userId, 'user_not_found'));
    if (held.accountId !== String(account))
      throw new AppError('conflict', 'This hardware id is registered to another device account; remove that first');
    await recordBy(this.deps.audit, p, 'device.register', {
      details: { hardwareId, accountId: held.accountId, via: held.via },
    });
    return held;
  }
}

function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}
