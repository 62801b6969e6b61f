import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { MeetingRef } from '../contracts/meeting.schema.js';
import { method } from './method.js';

/**
 * The hub's method declarations are held to ClientToServerEvents by the compiler (`npm run typecheck`
 * compiles this file): the `@ts-expect-error` lines below fail the typecheck if a mismatched schema
 * ever compiles, and the matching declaration fails it if a right one stops compiling.
 */
describe('hub method declarations against ClientToServerEvents', () => {
  const run = async () => ({});

  it('accept a schema whose parsed tuple is the declared arguments', () => {
    const m = method({ name: 'stopRecording', requires: 'meetings:record', args: z.tuple([MeetingRef]), run });
    expect(m.name).toBe('stopRecording');
  });

  it('refuse a schema with other arguments, fewer arguments or another method’s arguments', () => {
    const wrong = [
      // @ts-expect-error joinRoom takes a room id (a string), not a MeetingRef
      method({ name: 'joinRoom', requires: 'meetings:join', args: z.tuple([MeetingRef]), run }),
      // @ts-expect-error requestRemote takes a meeting id and a device id
      method({ name: 'requestRemote', requires: 'devices:control', args: z.tuple([z.string()]), run }),
      // @ts-expect-error deviceStatus's first argument may be null: a schema of strings only is narrower
      method({ name: 'deviceStatus', requires: 'devices:report', args: z.tuple([z.string(), z.object({})]), run }),
    ];
    expect(wrong).toHaveLength(3);
  });
});
