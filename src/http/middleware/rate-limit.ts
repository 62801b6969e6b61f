import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { AppError } from '../../core/errors.js';

/** One limit: at most `limit` requests per `windowSeconds` for each key `key(req)` returns. */
export interface RateLimitRule {
  /** Names the counter family (e.g. 'signin-ip'); part of the Redis key. */
  bucket: string;
  limit: number;
  windowSeconds: number;
  /** The identity counted (IP, tenant+account...); undefined skips the rule for this request. */
  key(req: Request): string | undefined;
}

export interface RateLimitDeps {
  redis: Redis;
  keyFor(bucket: string, id: string): string;
}

/** Fixed-window counter: INCR, and set the expiry on the first hit of a window, atomically. */
const SCRIPT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

/**
 * Generic Redis rate limiter shared by all nodes. Over the limit the request is refused with 429
 * `rate_limited` and a Retry-After of the seconds left in the window.
 */
export function rateLimit(deps: RateLimitDeps, rules: RateLimitRule[]): RequestHandler {
  return async (req, _res, next) => {
    for (const rule of rules) {
      const id = rule.key(req);
      if (!id) continue;
      const [count, ttl] = (await deps.redis.eval(SCRIPT, 1, deps.keyFor(rule.bucket, id), rule.windowSeconds)) as [number, number];
      if (count > rule.limit) throw new AppError('rate_limited', 'Too many requests; slow down', { retryAfter: Math.max(ttl, 1) });
    }
    next();
  };
}

/** Key helpers for the common identities. */
export const byIp = (req: Request): string | undefined => req.ip ?? req.socket.remoteAddress;
export const byBodyField = (field: string) => (req: Request): string | undefined => {
  const v = (req.body as Record<string, unknown> | undefined)?.[field];
  return typeof v === 'string' && v ? `${req.tenant?.name ?? '-'}:${v.toLowerCase().slice(0, 200)}` : undefined;
};
