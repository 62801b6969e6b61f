import { z } from 'zod';
import { Id } from '../../../kernel/paging.js';

export {
  CreateEventCommand,
  UpdateEventCommand,
  DeleteEventsCommand,
  EventListQuery,
} from '../../../core/meetings/event.schema.js';

export const EventIdParams = z.object({ eventId: Id });
