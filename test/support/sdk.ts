import http from 'node:http';
import {
  createRestClient,
  HubClient,
  type HubClientOptions,
  type RestClient,
} from '../../packages/client/src/index.js';

/**
 * A fetch for the SDK that names the tenant by Host over loopback: Node's own fetch drops a Host
 * header, and `{tenant}.localhost` does not resolve on these machines (TOOLCHAIN.md).
 */
export function tenantFetch(baseUrl: string, tenant: string): typeof fetch {
  const port = new URL(baseUrl).port;
  return async (input, init) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    const headers: Record<string, string> = Object.fromEntries(req.headers.entries());
    headers.host = `${tenant}.localhost:${port}`;
    if (body) headers['content-length'] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const r = http.request(
        { agent: false, host: '127.0.0.1', port, method: req.method, path: url.pathname + url.search, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const h = new Headers();
            for (const [k, v] of Object.entries(res.headers))
              if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
            const status = res.statusCode ?? 0;
            resolve(
              new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: h }),
            );
          });
        },
      );
      r.on('error', reject);
      if (body) r.write(body);
      r.end();
    });
  };
}

/** The SDK's REST client for a tenant of a test node, with the given token (or none). */
export function sdkRest(baseUrl: string, tenant: string, token?: () => string | undefined): RestClient {
  return createRestClient({
    baseUrl: `http://${tenant}.localhost:${new URL(baseUrl).port}`,
    fetch: tenantFetch(baseUrl, tenant),
    ...(token ? { token } : {}),
  });
}

/** The SDK's hub client for a tenant of a test node (websocket to 127.0.0.1 with the tenant's Host). */
export function sdkHub(
  baseUrl: string,
  tenant: string,
  token: () => string,
  opts: Pick<HubClientOptions, 'refreshEveryMs' | 'onTokenRefreshed' | 'onRefreshError' | 'ackTimeoutMs'> = {},
): HubClient {
  const port = new URL(baseUrl).port;
  return new HubClient({
    url: `http://127.0.0.1:${port}`,
    token,
    ...opts,
    socket: {
      transports: ['websocket'],
      extraHeaders: { host: `${tenant}.localhost:${port}` },
      reconnectionDelay: 50,
      reconnectionDelayMax: 200,
    },
  });
}
