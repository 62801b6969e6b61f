import http from 'node:http';

export interface HttpResult<T = any> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  text: string;
  raw: Buffer;
}

export interface RequestOptions {
  /** Tenant whose host (`{tenant}.localhost`) the request is sent to. */
  tenant?: string;
  host?: string;
  token?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Raw body (sent as is, with the given content-type header). */
  rawBody?: Buffer | string;
  /** Send the path exactly as written (no URL normalisation of dot segments or escapes): traversal probes. */
  rawPath?: boolean;
}

/**
 * Minimal HTTP client for tests: talks to 127.0.0.1 and sets the Host header the tenant resolver
 * reads (`*.localhost` does not resolve on these machines).
 */
export function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<HttpResult<T>> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = { ...opts.headers };
  headers.host = opts.host ?? (opts.tenant ? `${opts.tenant}.localhost:${url.port}` : `localhost:${url.port}`);
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let payload: Buffer | undefined;
  if (opts.rawBody !== undefined) payload = Buffer.from(opts.rawBody);
  else if (opts.body !== undefined) {
    payload = Buffer.from(JSON.stringify(opts.body));
    headers['content-type'] ??= 'application/json';
  }
  if (payload) headers['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: url.port, method, path: opts.rawPath ? path : url.pathname + url.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let body: any = text;
          if (/json/.test(String(res.headers['content-type']))) {
            try {
              body = JSON.parse(text);
            } catch {
              /* leave as text */
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, raw });
        });
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export function client(baseUrl: string, defaults: RequestOptions = {}) {
  const call =
    <T = any>(method: string) =>
    (path: string, opts: RequestOptions = {}) =>
      request<T>(baseUrl, method, path, { ...defaults, ...opts });
  return { get: call('GET'), post: call('POST'), put: call('PUT'), delete: call('DELETE'), patch: call('PATCH') };
}
