import { z } from 'zod';

/** A call session's id, as uploads name it (`sessionId` of UploadContent). */
export const SessionIdParams = z.object({ sessionId: z.string().min(1).max(128) });
