import { refreshSession, type LoginResponse } from './auth.js';
import type { RestClient } from './rest.js';

/**
 * A signed-in session that keeps its access token fresh: every `everyMs` (about 40 s, the spec's web
 * client cadence) it calls /api/account/refresh with the rotating refresh token. Pass `token` to
 * createRestClient and HubClient: both read the current token on each use.
 */
export class Session {
  private timer: ReturnType<typeof setInterval> | undefined;
  private current: { accessToken: string; refreshToken?: string; expiresAt?: string };

  constructor(login: Pick<LoginResponse, 'accessToken'> & { refreshToken?: string; expiresAt?: string }, private readonly onError: (e: unknown) => void = () => undefined) {
    this.current = login;
  }

  /** The current access token. */
  readonly token = (): string => this.current.accessToken;

  get refreshToken(): string | undefined {
    return this.current.refreshToken;
  }

  /** Refreshes now; the new access and refresh tokens replace the old ones. */
  async refresh(api: RestClient): Promise<void> {
    if (!this.current.refreshToken) throw new Error('this session has no refresh token');
    const next = await refreshSession(api, this.current.refreshToken);
    this.current = { ...this.current, ...(next as Partial<typeof this.current>) };
  }

  /** Refreshes every `everyMs` until stop(). */
  start(api: RestClient, everyMs = 40_000): this {
    this.stop();
    this.timer = setInterval(() => void this.refresh(api).catch(this.onError), everyMs);
    (this.timer as { unref?: () => void }).unref?.();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
