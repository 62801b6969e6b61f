import type { Request, RequestHandler } from 'express';
import type { RedisClient } from '../data/redis.js';
import { AppError } from '../kernel/errors.js';
import { addressKey } from './client-address.js';
import { LuaScript } from '../data/lua-script.js';

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
  redis: RedisClient;
  keyFor(bucket: string, id: string): string;
}

/** Fixed-window counter: INCR, and set the expiry on the first hit of a window, atomically. */
const SCRIPT = new LuaScript(`local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {n, ttl}`);

/**
 * Counts one hit of `id` in `bucket` on Redis (so every node shares the count) and throws 429
 * `rate_limited` with the seconds left in the window once the count passes `limit`. Used by every
 * transport: Express middleware, the hub handshake and the gRPC ingest.
 */
export async function countHit(
  deps: RateLimitDeps,
  bucket: string,
  id: string,
  limit: number,
  windowSeconds: number,
): Promise<void> {
  const [count, ttl] = (await SCRIPT.eval(deps.redis, 1, deps.keyFor(bucket, id), windowSeconds)) as [number, number];
  if (count > limit)
    throw new AppError('rate_limited', 'Too many requests; slow down', { retryAfter: Math.max(ttl, 1) });
}

/**
 * Generic Redis rate limiter shared by all nodes. Over the limit the request is refused with 429
 * `rate_limited` and a Retry-After of the seconds left in the window.
 */
export function rateLimit(deps: RateLimitDeps, rules: RateLimitRule[]): RequestHandler {
  return async (req, _res, next) => {
    for (const rule of rules) {
      const id = rule.key(req);
      if (id) await countHit(deps, rule.bucket, id, rule.limit, rule.windowSeconds);
    }
    next();
  };
}

/** Bucket of the per-client-address limit every transport shares (`RATE_LIMIT_PER_IP`). */
export const PER_IP_BUCKET = 'ip';

/** Bucket of new hub (engine.io) sessions per client address (`RATE_LIMIT_HUB_SESSIONS_PER_IP`). */
export const HUB_SESSION_BUCKET = 'hub-session';

/**
 * Key helpers for the common identities. `byIp` is the client address Express derived under
 * `TRUST_PROXY` (forwarded headers count only from trusted proxies), IPv6 by /64.
 */
export const byIp = (req: Request): string | undefined => {
  const ip = req.ip ?? req.socket.remoteAddress;
  return ip ? addressKey(ip) : undefined;
};

/** Tenant + lower-cased body field (e.g. the username of a sign-in), for per-account limits. */
export const byBodyField =
  (field: string, tenantOf: (req: Request) => string | undefined = (req) => req.tenant?.name) =>
  (req: Request): string | undefined => {
    const v = (req.body as Record<string, unknown> | undefined)?.[field];
    const tenant = tenantOf(req);
    return typeof v === 'string' && v && tenant ? `${tenant}:${v.toLowerCase().trim().slice(0, 200)}` : undefined;
  };
