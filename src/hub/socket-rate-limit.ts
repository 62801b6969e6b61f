import { AppError } from '../kernel/errors.js';

export interface RateLimitOptions {
  /** Calls a socket may make in a burst. */
  burst: number;
  /** Calls refilled per second. */
  perSecond: number;
}

/**
 * Per-socket token bucket. A socket lives on exactly one node, so its bucket is local memory; a
 * client that reconnects to flood gets a fresh bucket but also pays the handshake (token check).
 */
export class SocketRateLimit {
  private tokens: number;
  private last = performance.now();

  constructor(private readonly opts: RateLimitOptions) {
    this.tokens = opts.burst;
  }

  /** Takes one token or throws `rate_limited` with the seconds until the next one. */
  take(): void {
    const now = performance.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((now - this.last) / 1000) * this.opts.perSecond);
    this.last = now;
    if (this.tokens < 1) {
      throw new AppError('rate_limited', 'Too many hub calls on this connection', {
        retryAfter: Math.max(1, Math.ceil((1 - this.tokens) / this.opts.perSecond)),
      });
    }
    this.tokens -= 1;
  }
}
