import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { TrustProxy } from '../config/trust-proxy.js';

/** The client's address: the socket peer, or the forwarded address behind trusted proxies only. */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  return proxyaddr(req, trust);
}

export { addressKey } from '../kernel/address-key.js';

/**
 * Whether the request comes from a configured proxy address itself, with nobody untrusted behind it: every
 * hop from the socket to the client is trusted under `TRUST_PROXY`. What such a caller sends about the
 * request (a W3C `traceparent`) is believed; a request relayed for an outside client is not, since a proxy
 * passes the client's headers on.
 */
export function callerIsTrusted(req: IncomingMessage, trust: TrustProxy): boolean {
  const chain = proxyaddr.all(req, trust);
  const i = chain.length - 1;
  return i >= 0 && trust(chain[i]!, i);
}
