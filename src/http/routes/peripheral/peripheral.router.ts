import { z } from 'zod';
import { Id } from '../../../kernel/paging.js';
import { GetDeviceCommand } from '../../../core/meetings/peripheral.service.js';
import {
  PairDeviceCommand,
  PairingCodeCommand,
  RegisterDeviceCommand,
  UnregisterDeviceCommand,
} from '../../../core/directory/device-registration.service.js';
import { op, type RouteGroup } from '../route-spec.js';
import {
  DeviceInfo,
  DeviceMapping,
  PeripheralType,
  presentDevice,
  presentPeripheralType,
} from '../../presenters/peripheral.presenter.js';

const DeviceTypeParams = z.object({ deviceTypeId: Id });

/** Which device account may claim a hardware id in initRapidConnect (decision 1041). */
const DeviceRegistration = z.object({
  hardwareId: z.string(),
  accountId: z.string(),
  via: z.enum(['admin', 'pairing']),
  by: z.string(),
  createdAt: z.string(),
});
const presentRegistration = (r: {
  hardwareId: string;
  accountId: string;
  via: 'admin' | 'pairing';
  by: string;
  createdAt: Date;
}) => ({
  ...r,
  createdAt: new Date(r.createdAt).toISOString(),
});
const PairingCode = z.object({
  registered: z.boolean(),
  pairingCode: z.string().optional(),
  expiresAt: z.string().optional(),
});

/** /api/peripheral: peripheral types and device mapping. */
export const peripheralRoutes: RouteGroup = {
  base: '/api/peripheral',
  tag: 'Peripherals',
  routes: [
    op({
      operationId: 'peripheral.types',
      requires: 'peripherals:read',
      method: 'get',
      path: '/types',
      response: z.array(PeripheralType),
      summary: 'All peripheral types',
      handle: async (s, { p }) => (await s.peripherals.types(p)).map(presentPeripheralType),
    }),
    op({
      operationId: 'peripheral.getDevice',
      requires: 'devices:register',
      links: {
        rapidConnect: {
          operationId: 'meetings.startRapidConnect',
          parameters: { deviceId: '$response.body#/device/id' },
        },
      },
      errors: ['peripheral_type_not_found', 'conflict'],
      method: 'post',
      path: '/getDevice/:deviceTypeId',
      params: DeviceTypeParams,
      body: GetDeviceCommand,
      response: DeviceMapping,
      summary:
        'Map physical device ids to a device of the type; returns its device key (same ids, same device and key)',
      handle: async (s, { p, params, body }) => {
        const r = await s.peripherals.getDevice(p, params.deviceTypeId, body);
        return { device: presentDevice(r), deviceKey: r.deviceKey };
      },
    }),
    op({
      operationId: 'peripheral.devices',
      requires: 'peripherals:read',
      method: 'get',
      path: '/devices',
      response: z.array(DeviceInfo),
      summary: "Devices available to the caller: the tenant's shared devices and the caller's own",
      handle: async (s, { p }) => (await s.peripherals.devices(p)).map(presentDevice),
    }),
    op({
      operationId: 'peripheral.register',
      requires: 'tenant:admin',
      note: 'registers a hardware id to a device account (decision 1041)',
      errors: ['user_not_found', 'conflict'],
      method: 'post',
      path: '/registrations',
      body: RegisterDeviceCommand,
      response: DeviceRegistration,
      summary: 'Register a hardware id to a device account: only that account may claim it in initRapidConnect',
      handle: async (s, { p, body }) => presentRegistration(await s.deviceRegistrations.register(p, body)),
    }),
    op({
      operationId: 'peripheral.registrations',
      requires: 'tenant:admin',
      method: 'get',
      path: '/registrations',
      response: z.array(DeviceRegistration),
      summary: "The tenant's hardware id registrations",
      handle: async (s, { p }) => (await s.deviceRegistrations.list(p)).map(presentRegistration),
    }),
    op({
      operationId: 'peripheral.unregister',
      requires: 'tenant:admin',
      errors: ['device_not_found'],
      method: 'post',
      path: '/registrations/delete',
      body: UnregisterDeviceCommand,
      response: z.object({ removed: z.literal(true) }),
      summary: 'Remove the registration of a hardware id (its next claim needs a new registration)',
      handle: async (s, { p, body }) => {
        await s.deviceRegistrations.unregister(p, body);
        return { removed: true as const };
      },
    }),
    op({
      operationId: 'peripheral.pairingCode',
      requires: 'devices:report',
      note: 'the device account asks for the code its screen shows',
      errors: ['conflict'],
      method: 'post',
      path: '/pairingCode',
      body: PairingCodeCommand,
      response: PairingCode,
      summary: 'A device account asks for the pairing code it shows for its hardware id (10 minutes, once)',
      handle: async (s, { p, body }) => {
        const r = await s.deviceRegistrations.pairingCode(p, body);
        return r.registered ? r : { ...r, expiresAt: r.expiresAt.toISOString() };
      },
    }),
    op({
      operationId: 'peripheral.pair',
      requires: 'devices:control',
      note: 'a signed-in clinician or administrator enters the code a device shows (device accounts lack devices:control)',
      errors: ['not_found', 'conflict'],
      method: 'post',
      path: '/pair',
      body: PairDeviceCommand,
      response: DeviceRegistration,
      summary: 'Enter the pairing code a device shows: its hardware id is registered to its device account',
      handle: async (s, { p, body }) => presentRegistration(await s.deviceRegistrations.pair(p, body)),
    }),
  ],
};
