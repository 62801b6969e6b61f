import { z } from 'zod';
import { method } from '../method.js';
import { PositionsSchema, resumeStreams } from '../hub.resume.js';

/** Connection methods: the client keeps a live socket signed in by handing it each refreshed token. */
export const sessionMethods = [
  method({
    name: 'refreshToken',
    op: 'hub.refreshToken',
    args: z.tuple([z.string().min(1).max(16_384)]),
    run: (ctx, socket, [token]) => ctx.sessions.refresh(socket, token),
  }),
  method({
    name: 'resume',
    op: 'hub.resume',
    args: z.tuple([PositionsSchema]),
    run: (ctx, socket, [positions]) => resumeStreams(ctx.streams, socket, positions),
  }),
];
