import { refreshSession, type LoginResponse } from './auth.js';
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
  private timer: ReturnType<typeof setInterval> | undefined;
  private current: { accessToken: string; refreshToken?: string; expiresAt?: string };
  private readonly handlers: SessionHandlers;
  private inflight: Promise<void> | undefined;

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

  get refreshToken(): string | undefined {
    return this.current.refreshToken;
  }

  /**
   * Refreshes now; the new access and refresh tokens replace the old ones. One refresh at a time: a call
   * while one is under way joins it (two refreshes with the same rotating token would look like reuse to
   * the service, which then ends the session).
   */
  refresh(api: RestClient): Promise<void> {
    this.inflight ??= this.refreshOnce(api).finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async refreshOnce(api: RestClient): Promise<void> {
    if (!this.current.refreshToken) throw new Error('this session has no refresh token');
    const next = await refreshSession(api, this.current.refreshToken);
    this.current = { ...this.current, ...(next as Partial<typeof this.current>) };
    this.handlers.onRefreshed?.({ ...this.current });
  }

  /** Refreshes every `everyMs` until stop(). */
  start(api: RestClient, everyMs = 40_000): this {
    this.stop();
    this.timer = setInterval(() => void this.refresh(api).catch((e: unknown) => this.handlers.onError?.(e)), everyMs);
    (this.timer as { unref?: () => void }).unref?.();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
