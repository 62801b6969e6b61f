import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * The policy every response carries: nothing loads from elsewhere, no inline script (a page with an
 * inline script names it by hash, see `inlineHashes`), no framing (clickjacking of the realm's sign-in
 * and consent pages), no plugins. `form-action` is left out on purpose: the realm's sign-in form ends
 * in a redirect to the client's own origin, which that directive would block in browsers.
 */
const BASE_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
  formAction: null,
  upgradeInsecureRequests: null,
};

/** Browser features none of the service's pages use; a page framed or injected cannot ask for them. */
const PERMISSIONS_POLICY =
  'camera=(), microphone=(), geolocation=(), payment=(), usb=(), display-capture=(), interest-cohort=()';

/** `'sha256-…'` source expressions of inline `<script>`/`<style>` bodies, as CSP level 2 computes them. */
export function inlineHashes(html: string, tag: 'script' | 'style'): string[] {
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g');
  return [...html.matchAll(re)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
}

/**
 * Security headers of every response (helmet): CSP, X-Frame-Options DENY, Referrer-Policy no-referrer,
 * nosniff, cross-origin isolation headers, and Permissions-Policy. HSTS is sent only on requests that
 * arrived over https (directly or, per TRUST_PROXY, through a proxy that says so): a browser that saw
 * it on plain http would ignore it anyway, and development on http://*.localhost must stay reachable.
 */
export function securityHeaders(): RequestHandler {
  const base = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: BASE_DIRECTIVES },
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    crossOriginEmbedderPolicy: false,
  });
  const hsts = helmet.strictTransportSecurity({ maxAge: 31_536_000, includeSubDomains: true });
  return (req, res, next) => {
    res.setHeader('Permissions-Policy', PERMISSIONS_POLICY);
    base(req, res, (err?: unknown) => {
      if (err || !req.secure) return next(err);
      hsts(req, res, next);
    });
  };
}

/** A page's own CSP: the base policy plus the hashes of its inline scripts and styles. */
export function pageCsp(html: string): RequestHandler {
  return helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      ...BASE_DIRECTIVES,
      scriptSrc: ["'self'", ...inlineHashes(html, 'script')],
      styleSrc: ["'self'", ...inlineHashes(html, 'style')],
    },
  });
}

/**
 * The GraphQL explorer's policy: the base policy with inline styles allowed, because its editor
 * (Monaco) writes its themes and decorations into `<style>` elements at run time, and GraphiQL's
 * stylesheet carries its fonts as data: URLs. Scripts stay
 * 'self' only; no secret is rendered by CSS, and connect-src/img-src 'self' leave injected CSS nowhere
 * to send anything (decision 711).
 */
export function explorerCsp(): RequestHandler {
  return helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      ...BASE_DIRECTIVES,
      styleSrc: ["'self'", "'unsafe-inline'"],
      fontSrc: ["'self'", 'data:'],
      workerSrc: ["'self'"],
    },
  });
}
