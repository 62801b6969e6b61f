import { z } from 'zod';
import { Id } from '../../../core/paging.js';

export const MeetingCodeParams = z.object({
  meetingCode: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9]{6,16}$/, 'must be 6-16 letters or digits'),
});
export const DeviceIdParams = z.object({ deviceId: Id });
export const EventIdParams = z.object({ eventId: Id });
