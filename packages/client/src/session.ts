import { refreshSession, type LoginResponse } from './auth.js';
import { isConsultError } from './errors.js';
import type { RestClient } from './rest.js';

/**
 * A signed-in session that keeps its access token fresh: every `everyMs` (about 40 s, the spec's web
 * client cadence) it calls /api/account/refresh with the rotating refresh token. Pass `token` to
 * createRestClient and HubClient: both read the current token on each use.
 */
export interface SessionHandlers {
  /** A periodic refresh failed (a ConsultError, e.g. `session_revoked`: sign in again). */
  onError?: (error: unknown) => void;
  /** New tokens were obtained: store the rotated refresh token where the app keeps it. */
  onRefreshed?: (tokens: { accessToken: string; refreshToken?: string; expiresAt?: string }) => void;
}

export class Session {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = true;
  private current: { accessToken: string; refreshToken?: string; expiresAt?: string };
  private readonly handlers: SessionHandlers;
  private inflight: Promise<void> | undefined;
  private over: unknown;
  /** Periodic refreshes failed in a row for a transient reason (the next waits longer). */
  private failures = 0;

  /** `handlers` may also be just the error handler. */
  constructor(
    login: Pick<LoginResponse, 'accessToken'> & { refreshToken?: string; expiresAt?: string },
    handlers: SessionHandlers | ((e: unknown) => void) = {},
  ) {
    this.current = login;
    this.handlers = typeof handlers === 'function' ? { onError: handlers } : handlers;
  }

  /** The current access token. */
  readonly token = (): string => this.current.accessToken;

  /**
   * The access token, refreshed first when it expires within `marginMs` (one refresh however many
   * callers wait: they all get its token). Give `() => session.freshToken(api)` to HubClient and the
   * REST client so that every (re)connection and call carries a live token.
   */
  async freshToken(api: RestClient, marginMs = 30_000): Promise<string> {
    if (this.expiresWithin(marginMs)) await this.refresh(api);
    return this.current.accessToken;
  }

  /** When the access token expires (ms since the epoch), if the sign-in said so. */
  get expiresAt(): number | undefined {
    const at = this.current.expiresAt ? Date.parse(this.current.expiresAt) : NaN;
    return Number.isFinite(at) ? at : undefined;
  }

  private expiresWithin(ms: number): boolean {
    const at = this.expiresAt;
    return at !== undefined && at - Date.now() <= ms;
  }

  /**
   * The service's refusal that ended this session (`session_revoked`, `invalid_credentials`): refreshes
   * stop and every later one fails with it without a request. Undefined while the session lives.
   */
  get ended(): unknown {
    return this.over;
  }

  get refreshToken(): string | undefined {
    return this.current.refreshToken;
  }

  /**
   * Refreshes now; the new access and refresh tokens replace the old ones. One refresh at a time: a call
   * while one is under way joins it (two refreshes with the same rotating token would look like reuse to
   * the service, which then ends the session).
   */
  refresh(api: RestClient): Promise<void> {
    if (this.over !== undefined) return Promise.reject(this.over);
    this.inflight ??= this.refreshOnce(api).finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async refreshOnce(api: RestClient): Promise<void> {
    if (!this.current.refreshToken) throw new Error('this session has no refresh token');
    let next;
    try {
      next = await refreshSession(api, this.current.refreshToken);
    } catch (e) {
      if (isConsultError(e, 'session_revoked', 'invalid_credentials')) this.over = e;
      throw e;
    }
    this.current = { ...this.current, ...(next as Partial<typeof this.current>) };
    this.handlers.onRefreshed?.({ ...this.current });
  }

  /**
   * Keeps the token fresh until stop(): refreshes every `everyMs` (about 40 s, the web client's cadence),
   * or `marginMs` before the token's expiry when that comes sooner. A refresh that failed for a transient
   * reason (network, service unavailable) is tried again after 1 s, doubling up to `everyMs` (without the
   * wait, an expired token made it ask again at once, in a loop); one the service refused for good
   * (`ended`) stops the refreshes.
   */
  start(api: RestClient, everyMs = 40_000, marginMs = 30_000): this {
    this.stop();
    this.stopped = false;
    const schedule = () => {
      if (this.stopped || this.over !== undefined) return;
      const at = this.expiresAt;
      const due = Math.max(0, Math.min(everyMs, at === undefined ? everyMs : at - marginMs - Date.now()));
      const wait = this.failures ? Math.max(due, Math.min(everyMs, 1_000 * 2 ** (this.failures - 1))) : due;
      this.timer = setTimeout(
        () =>
          void this.refresh(api)
            .then(
              () => (this.failures = 0),
              (e: unknown) => {
                this.failures++;
                this.handlers.onError?.(e);
              },
            )
            .finally(schedule),
        Math.min(wait, 2 ** 31 - 1),
      );
      (this.timer as { unref?: () => void }).unref?.();
    };
    schedule();
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
