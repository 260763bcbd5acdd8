// Which Host names a dashboard answers: the defence against DNS rebinding. A page on any site
// can point its own name at 127.0.0.1 once it has loaded; its scripts then reach a server on
// this machine as "the same origin", and the browser sends that site's name in the Host
// header. So a request whose Host is not a name the dashboard is meant to be reached by is
// refused before anything else is read.
//
// Accepted by default: the loopback names and addresses (`localhost` and its subdomains,
// 127.0.0.0/8, `[::1]`), at any port. `allowedHosts` adds names: `"ops.example.com"` (any
// port), `"ops.example.com:8443"` (that port only), `".example.com"` (the name and every
// subdomain), or `true` for any Host (a proxy in front checks it). An address literal
// cannot be rebound, but only the loopback ones are accepted unless listed, so that a
// dashboard answers only the names it was given.

/**
 * A host check: `(url) => boolean` for the URL a request was made to.
 * @param {string[] | true} allowedHosts
 * @param {string} name the option's name in messages
 * @returns {(url: URL) => boolean}
 */
export function hostCheck(allowedHosts, name = "options.allowedHosts") {
  if (allowedHosts === true) return () => true;
  if (!Array.isArray(allowedHosts) || allowedHosts.some((h) => typeof h !== "string" || h === "")) {
    throw new TypeError(`${name} must be true or an array of host names (non-empty strings)`);
  }
  const rules = allowedHosts.map((h) => ruleOf(h, name));
  return (url) => loopback(url.hostname) || rules.some((r) => r(url.hostname, url.port));
}

/** Whether `hostname` (as URL gives it: lower case, IPv4 canonical, IPv6 in brackets) is this machine's. */
function loopback(hostname) {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  if (hostname === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** One entry of allowedHosts as a test of (hostname, port). */
function ruleOf(entry, name) {
  const suffix = entry.startsWith(".");
  let url;
  try {
    url = new URL(`http://${suffix ? entry.slice(1) : entry}`);
  } catch {
    url = null;
  }
  if (url === null || url.pathname !== "/" || url.username !== "" || url.search !== "" || url.hash !== "") {
    throw new TypeError(
      `${name}: ${JSON.stringify(entry)} is not a host name (like "ops.example.com" or "ops.example.com:8443")`,
    );
  }
  const { hostname } = url;
  const port = /:\d+$/.test(entry) ? url.port : null; // an entry without a port: any port
  if (suffix) return (h) => h === hostname || h.endsWith(`.${hostname}`);
  return (h, p) => h === hostname && (port === null || p === port);
}
