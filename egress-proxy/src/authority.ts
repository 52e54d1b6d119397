/**
 * The host and port of a request target, read the way the proxy will use them: `host:port`,
 * `[v6]:port`, or a bare host with the scheme's port. Anything else (user info, an empty host, a
 * port that is not a plain number) is no target.
 */
export function splitAuthority(authority: string, defaultPort?: number): { host: string; port: number } | undefined {
  if (authority.length === 0 || authority.length > 1024 || /[@\s/\\]/.test(authority)) return undefined;
  let host: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) return undefined;
    host = authority.slice(0, close + 1);
    const rest = authority.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    portText = rest === '' ? undefined : rest.slice(1);
  } else {
    const parts = authority.split(':');
    if (parts.length > 2) return undefined;
    host = parts[0]!;
    portText = parts[1];
  }
  if (host === '' || host === '[]') return undefined;
  if (portText === undefined) return defaultPort === undefined ? undefined : { host, port: defaultPort };
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** Splits an absolute-form `http://authority/path?query` request target; https:// and others are not forwarded. */
export function splitAbsoluteHttp(target: string): { authority: string; path: string } | undefined {
  const m = /^http:\/\/([^/?#]*)([/?][^#]*)?$/i.exec(target);
  if (!m) return undefined;
  const rest = m[2] ?? '/';
  return { authority: m[1]!, path: rest.startsWith('?') ? `/${rest}` : rest };
}
