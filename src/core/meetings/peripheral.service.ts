import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../../kernel/principal.js';
import type { DeviceRecord, DeviceRepository } from '../../data/repositories/device.repository.js';
import type { PeripheralRepository, PeripheralTypeRecord } from '../../data/repositories/peripheral.repository.js';
import { AppError } from '../../kernel/errors.js';
import { isObjectIdString, oid } from '../../kernel/object-id.js';
import { TtlCache } from '../../kernel/ttl-cache.js';

/** Body of POST /api/peripheral/getDevice/{deviceTypeId}: the ids the hardware reports about itself. */
export const GetDeviceCommand = z.object({
  physicalIds: z.array(z.string().trim().min(1).max(200)).min(1).max(16),
  name: z.string().trim().min(1).max(100).optional(),
  /** Register the device to the caller (personal device) instead of sharing it in the tenant. */
  personal: z.boolean().default(false),
});
export type GetDeviceCommand = z.infer<typeof GetDeviceCommand>;

/** What a device's actor last knew, kept on its record (GET /api/peripheral/devices shows it). */
export interface DeviceStatusUpdate {
  status: 'online' | 'offline';
  lastHeartbeatAt?: Date;
  info?: Record<string, unknown>;
}

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

  /** Hardware id -> device id, per tenant. A mapping never changes once made, so only its expiry bounds it. */
  private readonly mapped = new TtlCache<string, string>({ ttlMs: 600_000, maxEntries: 50_000 });

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

  /**
   * One device identity (docs/decisions/312): the id of the device record when the id names one (its
   * own id, or one of the hardware ids getDevice mapped to it), else the hardware id itself (a headset
   * no one mapped). Every REST and hub operation on a device goes through this, so either id finds it.
   * Hardware mapped for two peripheral types names the first device it was mapped to (the oldest), so
   * the answer never changes once given and may be cached.
   */
  async resolveDeviceId(tenant: string, id: string): Promise<string> {
    const key = `${tenant}\n${id}`;
    const hit = this.mapped.get(key);
    if (hit) return hit;
    const found = await this.deps.devices(tenant).findByAnyId(id);
    if (!found) return id;
    const resolved = String(found._id);
    this.mapped.set(key, resolved);
    return resolved;
  }

  /** Records a status change of a mapped device; a hardware id no one mapped has no record to keep it. */
  async recordStatus(tenant: string, deviceId: string, s: DeviceStatusUpdate): Promise<void> {
    if (isObjectIdString(deviceId)) await this.deps.devices(tenant).recordStatus(oid(deviceId), s);
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
