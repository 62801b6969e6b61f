import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { ConsultError, type ErrorCode } from './errors.js';
import { inNode, isLoopbackName, loopbackFetch } from './localhost.js';

export type { paths };
export type RestClient = Client<paths>;

export interface RestClientOptions {
  /**
   * The tenant's base address, e.g. `https://acme.consult.example`. A `*.localhost` address (the local
   * service, `http://demo.localhost:8080`) is connected to loopback by the client itself in Node.js
   * (RFC 6761), as browsers do.
   */
  baseUrl: string;
  /** The current access token (called per request, so a refreshed token is used at once). */
  token?: () => string | undefined;
  /** A fetch to use instead of the global one (tests, proxies, custom agents). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** Turns a problem+json answer into a ConsultError with its code, status, field errors and correlation id. */
async function problemOf(res: Response): Promise<ConsultError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.clone().json()) as Record<string, unknown>;
  } catch {
    /* not JSON: keep the status only */
  }
  const code = (typeof body.code === 'string' ? body.code : res.status === 404 ? 'not_found' : 'internal') as ErrorCode;
  const retry = res.headers.get('retry-after');
  return new ConsultError(code, String(body.detail ?? body.title ?? res.statusText), {
    status: res.status,
    ...(Array.isArray(body.errors) ? { errors: body.errors as ConsultError['errors'] } : {}),
    ...(retry ? { retryAfter: Number(retry) } : {}),
    ...(typeof body.correlationId === 'string' ? { correlationId: body.correlationId } : {}),
  });
}

/**
 * REST calls typed from the service's OpenAPI document (openapi-fetch over generated types): paths,
 * parameters, bodies and answers are checked by the compiler. Every answer of 400 or more is thrown
 * as a ConsultError, so `data` of a call that returns is the success body.
 */
export function createRestClient(opts: RestClientOptions): RestClient {
  const fetcher =
    opts.fetch ?? (inNode() && isLoopbackName(new URL(opts.baseUrl).hostname) ? loopbackFetch : undefined);
  const client = createClient<paths>({
    baseUrl: opts.baseUrl,
    ...(fetcher ? { fetch: fetcher } : {}),
    headers: opts.headers,
  });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = opts.token?.();
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
    async onResponse({ response }) {
      if (response.status >= 400) throw await problemOf(response);
      return response;
    },
  };
  client.use(auth);
  return client;
}

/** The body of a successful call (`const me = await body(api.GET('/api/contacts/me'))`). */
export async function body<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  const { data, response } = await call;
  if (data === undefined)
    throw new ConsultError('internal', `No body in the ${response.status} answer`, { status: response.status });
  return data;
}
