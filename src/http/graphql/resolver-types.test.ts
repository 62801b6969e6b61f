import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { LockRequest, RemoveParticipantRequest } from '../../contracts/meeting-controls.schema.js';
import { parseArgs } from './args.js';
import type { Assert, Covered, MeModel } from './models.js';
import type { Me, MeResolvers, MutationRemoveParticipantArgs, QueryResolvers } from './generated/types.js';

/**
 * The resolvers are held to the schema by the compiler (`npm run typecheck` compiles this file): each
 * `@ts-expect-error` below fails the typecheck if the mismatch under it ever compiles.
 */
describe('resolvers typed from the schema', () => {
  const ctxFree = { eventId: 'e1', waiting: [] };

  it('refuse a resolver whose argument or result is not the schema’s', () => {
    const wrong: QueryResolvers = {
      // @ts-expect-error waitingRoom's eventId is an ID (a string), not a number
      waitingRoom: (_parent, args: { eventId: number }) => ({ ...ctxFree, eventId: String(args.eventId) }),
      // @ts-expect-error hasPin is a Boolean!, not a string
      hasPin: () => 'yes',
      // @ts-expect-error contactAlphabets' buckets have a count
      contactAlphabets: () => [{ letter: 'A' }],
    };
    expect(Object.keys(wrong)).toHaveLength(3);
  });

  it('refuse a root map without a resolver for every field', () => {
    // @ts-expect-error Query has more fields than me
    const partial = { me: () => Promise.reject(new Error('unused')) } satisfies Required<QueryResolvers>;
    expect(Object.keys(partial)).toEqual(['me']);
  });

  it('refuse a request schema that drops or refuses an argument of the SDL', () => {
    const args: MutationRemoveParticipantArgs = { eventId: 'e1', userId: 'u1', reason: null, requestId: null };
    // @ts-expect-error LockRequest has no userId or reason: zod would drop them
    expect(parseArgs(LockRequest, args)).toEqual({ eventId: 'e1' });
    // @ts-expect-error a numeric eventId refuses the SDL's ID
    expect(() => parseArgs(z.object({ eventId: z.number(), userId: z.string() }), args)).toThrow();
  });

  it('accept the schema the mutation uses, with nulls dropped', () => {
    const args: MutationRemoveParticipantArgs = { eventId: 'e1', userId: 'u1', reason: null, requestId: null };
    expect(parseArgs(RemoveParticipantRequest, args)).toEqual({ eventId: 'e1', userId: 'u1' });
    expect(() => parseArgs(RemoveParticipantRequest, { ...args, userId: ' ' })).toThrow();
  });

  it('refuse a mapped parent whose model lacks a field left to the default resolver', () => {
    const fields = { contact: () => Promise.reject(new Error('unused')) } satisfies MeResolvers;
    // @ts-expect-error MeModel keeps id, username, ... under `user`: without their resolvers Me is not covered
    type Uncovered = Assert<Covered<MeModel, Me, typeof fields>>;
    const covered: Uncovered | undefined = undefined;
    expect(covered).toBeUndefined();
  });
});
