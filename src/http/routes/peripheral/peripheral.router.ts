import { z } from 'zod';
import { Id } from '../../../core/paging.js';
import { GetDeviceCommand } from '../../../core/peripheral.service.js';
import { op, type RouteGroup } from '../route-spec.js';
import {
  DeviceInfo,
  DeviceMapping,
  PeripheralType,
  presentDevice,
  presentPeripheralType,
} from '../../presenters/peripheral.presenter.js';

const DeviceTypeParams = z.object({ deviceTypeId: Id });

/** /api/peripheral: peripheral types and device mapping. */
export const peripheralRoutes: RouteGroup = {
  base: '/api/peripheral',
  tag: 'Peripherals',
  routes: [
    op({
      operationId: 'peripheral.types',
      method: 'get',
      path: '/types',
      response: z.array(PeripheralType),
      summary: 'All peripheral types',
      handle: async (s, { p }) => (await s.peripherals.types(p)).map(presentPeripheralType),
    }),
    op({
      operationId: 'peripheral.getDevice',
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
      method: 'get',
      path: '/devices',
      response: z.array(DeviceInfo),
      summary: "Devices available to the caller: the tenant's shared devices and the caller's own",
      handle: async (s, { p }) => (await s.peripherals.devices(p)).map(presentDevice),
    }),
  ],
};
