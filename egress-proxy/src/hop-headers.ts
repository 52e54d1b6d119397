/** Headers that describe one hop (RFC 9110 7.6.1), plus those the proxy sets itself: never passed on. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** rawHeaders ([name, value, name, value...]) without hop-by-hop headers and those Connection names. */
export function endToEndHeaders(raw: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') {
      for (const n of raw[i + 1]!.split(',')) named.add(n.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}
