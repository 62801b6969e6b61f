import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import { askWithRetry, type AskPlan, type AskRoute } from './ask-loop.js';

/** A route to a remote owner whose every reply is `reply(attempt)`, after the clock has moved by `costMs`. */
function routeReplying(reply: (attempt: number) => Promise<unknown>, clock: { now: number }, costMs = 0): AskRoute {
  return {
    nodeId: 'asker',
    attemptMs: 1_000,
    resolveOwner: async () => 'owner',
    deliverLocal: async () => {
      throw new Error('not local');
    },
    request: async (_node, body) => {
      clock.now += costMs;
      return reply(body.attempt);
    },
    routed: () => {},
    unroute: () => {},
  };
}

function plan(deadline: number): AskPlan {
  return {
    to: { tenant: 't', kind: 'call', id: 'a' },
    key: 't/a',
    shard: 1,
    msg: {},
    dedupeId: 'd',
    minted: false,
    deadline,
  };
}

describe('askWithRetry past its deadline', () => {
  const realNow = Date.now;
  const withClock = async (clock: { now: number }, run: () => Promise<unknown>) => {
    Date.now = () => clock.now;
    try {
      return await run();
    } finally {
      Date.now = realNow;
    }
  };

  it('reports timeout, not the routing refusal it met last (the asker never reached an owner in time)', async () => {
    const clock = { now: 1_000 };
    const notOwner = () => Promise.reject(new AppError('not_owner', 'shard moved'));
    // The refusal is handled after the deadline: a loaded loop ran the reply before the attempt's timer.
    const route = routeReplying(notOwner, clock, 200);
    await expect(withClock(clock, () => askWithRetry(route, plan(1_150)))).rejects.toMatchObject({ code: 'timeout' });
  });

  it('keeps service_unavailable (it tells the asker the cluster, not the actor, is the cause)', async () => {
    const clock = { now: 1_000 };
    const unavailable = () => Promise.reject(new AppError('service_unavailable', 'no quorum'));
    const route = routeReplying(unavailable, clock, 200);
    await expect(withClock(clock, () => askWithRetry(route, plan(1_150)))).rejects.toMatchObject({
      code: 'service_unavailable',
    });
  });

  it('retries a refusal met before the deadline and returns the answer', async () => {
    const clock = { now: 1_000 };
    const route = routeReplying(
      (attempt) => (attempt === 1 ? Promise.reject(new AppError('not_owner', 'moved')) : Promise.resolve('ok')),
      clock,
      10,
    );
    await expect(withClock(clock, () => askWithRetry(route, plan(5_000)))).resolves.toBe('ok');
  });

  it('passes a permanent error through at once', async () => {
    const clock = { now: 1_000 };
    const route = routeReplying(() => Promise.reject(new AppError('not_found', 'no such')), clock);
    await expect(withClock(clock, () => askWithRetry(route, plan(5_000)))).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
