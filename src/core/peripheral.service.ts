import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import type { DeviceRecord, DeviceRepository } from '../data/repositories/device.repository.js';
import type { PeripheralRepository, PeripheralTypeRecord } from '../data/repositories/peripheral.repository.js';
import { AppError } from './errors.js';
import { oid } from './object-id.js';

/** Body of POST /api/peripheral/getDevice/{deviceTypeId}: the ids the hardware reports about itself. */
export const GetDeviceCommand = z.object({
  physicalIds: z.array(z.string().trim().min(1).max(200)).min(1).max(16),
  name: z.string().trim().min(1).max(100).optional(),
  /** Register the device to the caller (personal device) instead of sharing it in the tenant. */
  personal: z.boolean().default(false),
});
export type GetDeviceCommand = z.infer<typeof GetDeviceCommand>;

export interface DeviceView {
  device: DeviceRecord;
  type: PeripheralTypeRecord | undefined;
}

/**
 * Peripheral types and device mapping. The device key is derived, not stored: HMAC of the tenant,
 * type and sorted physical ids under a key derived from the deployment secret. The same ids always
 * give the same key (getDevice is idempotent) and only its SHA-256 is kept (docs/decisions/205-device-keys.md).
 */
export class PeripheralService {
  private readonly keyMaterial: Buffer;

  constructor(
    private readonly deps: {
      peripherals: (tenant: string) => PeripheralRepository;
      devices: (tenant: string) => DeviceRepository;
      secret: string;
    },
  ) {
    this.keyMaterial = Buffer.from(hkdfSync('sha256', deps.secret, 'consult-device-keys', 'device-key/v1', 32));
  }

  types(p: Principal): Promise<PeripheralTypeRecord[]> {
    return this.deps.peripherals(p.tenant).listTypes();
  }

  async getDevice(
    p: Principal,
    deviceTypeId: string,
    cmd: GetDeviceCommand,
  ): Promise<DeviceView & { deviceKey: string }> {
    const type = await this.deps.peripherals(p.tenant).findType(oid(deviceTypeId, 'peripheral_type_not_found'));
    if (!type) throw new AppError('peripheral_type_not_found', `No peripheral type ${deviceTypeId}`);
    const physicalIds = [...new Set(cmd.physicalIds)].sort();
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([String(type._id), physicalIds]))
      .digest('hex');
    const deviceKey = createHmac('sha256', this.keyMaterial).update(`${p.tenant}\n${fingerprint}`).digest('base64url');
    const device = await this.deps.devices(p.tenant).upsertByFingerprint({
      typeId: type._id,
      physicalIds,
      fingerprint,
      deviceKeyHash: createHash('sha256').update(deviceKey).digest('hex'),
      name: cmd.name ?? `${type.name} ${physicalIds[0]!.slice(-6)}`,
      ...(cmd.personal ? { ownerUserId: oid(p.userId, 'user_not_found') } : {}),
    });
    return { device, type, deviceKey };
  }

  async devices(p: Principal): Promise<DeviceView[]> {
    const devices = await this.deps.devices(p.tenant).listAvailable(oid(p.userId, 'user_not_found'));
    const types = await this.deps
      .peripherals(p.tenant)
      .findTypes([...new Map(devices.map((d) => [String(d.typeId), d.typeId])).values()]);
    const byId = new Map(types.map((t) => [String(t._id), t]));
    return devices.map((device) => ({ device, type: byId.get(String(device.typeId)) }));
  }
}
