import { z } from 'zod';
import type { PeripheralTypeRecord } from '../../data/models/peripheral-type.model.js';
import type { DeviceView } from '../../core/meetings/peripheral.service.js';
import { IsoDate, iso } from './common.presenter.js';

export const PeripheralType = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  capabilities: z.array(z.string()),
});

export const DeviceInfo = z.object({
  id: z.string(),
  name: z.string(),
  typeId: z.string(),
  typeKey: z.string().nullable(),
  physicalIds: z.array(z.string()),
  status: z.enum(['online', 'offline']),
  personal: z.boolean(),
  lastHeartbeatAt: IsoDate.nullable(),
  /** What the headset last reported in deviceStatus (battery, network, camera...), as the hub relays it. */
  info: z.record(z.string(), z.unknown()),
});

/** Result of getDevice: the device and its key (the same for the same physical ids). */
export const DeviceMapping = z.object({ device: DeviceInfo, deviceKey: z.string() });

export function presentPeripheralType(t: PeripheralTypeRecord): z.infer<typeof PeripheralType> {
  return { id: String(t._id), key: t.key, name: t.name, capabilities: [...(t.capabilities ?? [])] };
}

export function presentDevice(v: DeviceView): z.infer<typeof DeviceInfo> {
  const d = v.device;
  return {
    id: String(d._id),
    name: d.name,
    typeId: String(d.typeId),
    typeKey: v.type?.key ?? null,
    physicalIds: [...d.physicalIds],
    status: d.status as 'online' | 'offline',
    personal: !!d.ownerUserId,
    lastHeartbeatAt: iso(d.lastHeartbeatAt),
    info: { ...((d.info as Record<string, unknown> | undefined) ?? {}) },
  };
}
