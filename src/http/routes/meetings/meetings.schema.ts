import { z } from 'zod';
import { Id } from '../../../kernel/paging.js';

export const MeetingCodeParams = z.object({
  meetingCode: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9]{6,16}$/, 'must be 6-16 letters or digits'),
});
/** A device's id or one of the hardware ids getDevice mapped to it (decision 312). */
export const DeviceIdParams = z.object({ deviceId: z.string().trim().min(1).max(200) });
export const EventIdParams = z.object({ eventId: Id });
