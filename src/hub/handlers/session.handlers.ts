import { z } from 'zod';
import { method } from '../method.js';
import { PositionsSchema, resumeStreams } from '../hub.resume.js';

/** Connection methods: the client keeps a live socket signed in by handing it each refreshed token. */
export const sessionMethods = [
  method({
    name: 'refreshToken',
    requires: 'authenticated',
    note: "a newer access token of the same user replaces the connection's",
    args: z.tuple([z.string().min(1).max(16_384)]),
    run: (ctx, socket, [token]) => ctx.sessions.refresh(socket, token),
  }),
  method({
    name: 'resume',
    requires: 'authenticated',
    note: "replays the pushes the connection's own streams missed",
    args: z.tuple([PositionsSchema]),
    run: (ctx, socket, [positions]) => resumeStreams(ctx.streams, socket, positions),
  }),
];
