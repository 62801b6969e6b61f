import { z } from 'zod';
import { Id } from '../../../core/paging.js';

export {
  CreateEventCommand,
  UpdateEventCommand,
  DeleteEventsCommand,
  EventListQuery,
} from '../../../core/event.schema.js';

export const EventIdParams = z.object({ eventId: Id });
