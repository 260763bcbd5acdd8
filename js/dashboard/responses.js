// The dashboard's responses: every one carries the same security headers (a
// Content-Security-Policy that allows no inline script and no other origin, no framing, no
// sniffing, no caching), so that no route can forget them.

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
export const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export function respond(status, body, type, extra = {}) {
  return new Response(body, { status, headers: { ...SECURITY_HEADERS, "content-type": type, ...extra } });
}

export function json(status, data) {
  return respond(status, JSON.stringify(data), "application/json; charset=utf-8");
}

export function text(status, body) {
  return respond(status, body, "text/plain; charset=utf-8");
}

export function redirect(location) {
  return respond(308, "", "text/plain; charset=utf-8", { location });
}
