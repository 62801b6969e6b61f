import type { TenantConfigRepository } from '../../data/repositories/tenant-config.repository.js';
import { TtlCache } from '../../kernel/ttl-cache.js';

/** The two browser pages of sign-in: the realm's redirect URI and the QR code's approval page. */
export interface WebAppPages {
  /** Where the realm sends the browser back with the authorization code. */
  signInRedirectUri: string;
  /** The page a QR login code points at; the code is added as its `code` query parameter. */
  loginApproveUrl: string;
}

export interface WebAppUrlsDeps {
  /** The deployment's public URL and the base domain tenants are subdomains of. */
  site: { publicUrl: string; baseDomain: string };
  /** WEB_SIGNIN_REDIRECT_URI and WEB_LOGIN_APPROVE_URL, `{tenant}` not yet replaced; unset = the service's own pages. */
  deployment: { signInRedirectUri?: string; loginApproveUrl?: string };
  settings(tenant: string): Pick<TenantConfigRepository, 'settings'>;
}

export const OWN_CALLBACK_PATH = '/auth/callback';
export const OWN_APPROVE_PATH = '/login/approve';

/**
 * Which web application serves a tenant's sign-in callback and QR approval page (decision 330): the
 * tenant's TenantConfig `webApp`, else the deployment's settings, else the service's own pages on the
 * tenant's host. A settings change applies within 10 s. Every origin comes from configuration
 * (PUBLIC_URL's scheme and port, `{tenant}.BASE_DOMAIN`), never from a request's Host header.
 */
export class WebAppUrls {
  private readonly tenants = new TtlCache<string, { signInRedirectUri?: string; loginApproveUrl?: string }>({
    ttlMs: 10_000,
    maxEntries: 10_000,
  });

  constructor(private readonly deps: WebAppUrlsDeps) {}

  /** Drops this node's cached pages of `tenant` (after a change; other nodes follow within 10 s). */
  forget(tenant: string): void {
    this.tenants.delete(tenant);
  }

  /** `{scheme}://{tenant}.{baseDomain}[:port]`, from the deployment's public URL. */
  tenantOrigin(tenant: string): string {
    const u = new URL(this.deps.site.publicUrl);
    return `${u.protocol}//${tenant}.${this.deps.site.baseDomain}${u.port ? `:${u.port}` : ''}`;
  }

  /** The service's own pages on the tenant's host. */
  ownPages(tenant: string): WebAppPages {
    const origin = this.tenantOrigin(tenant);
    return { signInRedirectUri: `${origin}${OWN_CALLBACK_PATH}`, loginApproveUrl: `${origin}${OWN_APPROVE_PATH}` };
  }

  /** The pages in effect for the tenant. */
  async pages(tenant: string): Promise<WebAppPages> {
    const own = this.ownPages(tenant);
    const t = await this.tenants.getOrLoad(tenant, async () => {
      const w = (await this.deps.settings(tenant).settings())?.webApp;
      return {
        ...(w?.signInRedirectUri ? { signInRedirectUri: w.signInRedirectUri } : {}),
        ...(w?.loginApproveUrl ? { loginApproveUrl: w.loginApproveUrl } : {}),
      };
    });
    const d = this.deps.deployment;
    const fill = (template?: string) => template?.replaceAll('{tenant}', tenant);
    return {
      signInRedirectUri: t.signInRedirectUri ?? fill(d.signInRedirectUri) ?? own.signInRedirectUri,
      loginApproveUrl: t.loginApproveUrl ?? fill(d.loginApproveUrl) ?? own.loginApproveUrl,
    };
  }

  /**
   * Redirect URIs the embedded realm registers for the service's client: the public URL's and the tenant
   * host's own callback (the service's page always works), and the configured web app's when it differs.
   */
  async registeredRedirectUris(tenant: string): Promise<string[]> {
    const own = [
      `${this.deps.site.publicUrl.replace(/\/$/, '')}${OWN_CALLBACK_PATH}`,
      this.ownPages(tenant).signInRedirectUri,
    ];
    return [...new Set([...own, (await this.pages(tenant)).signInRedirectUri])];
  }
}
