/**
 * IP literals in their one canonical textual form, as numbers. Only the forms a person would write
 * (dotted-quad IPv4 with no leading zeros, RFC 4291 IPv6 without a zone) are addresses here: the
 * shorthand forms inet_aton also accepts (`127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`) are
 * not, and `looksNumeric` catches them so they are never taken for a name either.
 */
export interface IpAddress {
  family: 4 | 6;
  /** The address as an unsigned 32- or 128-bit number. */
  value: bigint;
}

/** An address and a prefix length: a single address has the full length (32 or 128). */
export interface IpNetwork extends IpAddress {
  prefix: number;
}

const V4_PART = /^(0|[1-9][0-9]{0,2})$/;

export function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const p of parts) {
    if (!V4_PART.test(p) || Number(p) > 255) return undefined;
    value = (value << 8n) | BigInt(p);
  }
  return { family: 4, value };
}

/** RFC 4291 text form, with an optional dotted IPv4 tail; no zone id (`%eth0`), no brackets. */
export function parseIpv6(text: string): IpAddress | undefined {
  if (text.length === 0 || text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    const pieces = s.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIpv4(piece);
        if (!v4) return undefined;
        out.push(Number(v4.value >> 16n), Number(v4.value & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return undefined;
  // A dotted tail is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(g);
  return { family: 6, value };
}

/** Either family; IPv6 may be given in brackets (`[::1]`). */
export function parseIp(text: string): IpAddress | undefined {
  if (text.startsWith('[') && text.endsWith(']')) return parseIpv6(text.slice(1, -1));
  return parseIpv4(text) ?? parseIpv6(text);
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) {
    return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.');
  }
  const groups = [...Array(8).keys()].map((i) => Number((ip.value >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups becomes `::` (RFC 5952).
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len && j - i >= 2) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}

export function ipBits(family: 4 | 6): number {
  return family === 4 ? 32 : 128;
}

export function networkContains(net: IpNetwork, ip: IpAddress): boolean {
  if (net.family !== ip.family) return false;
  const shift = BigInt(ipBits(net.family) - net.prefix);
  return net.value >> shift === ip.value >> shift;
}

/**
 * True for names a resolver would read as a number rather than look up: the last label is all
 * digits or `0x` hex (WHATWG URL's "ends in a number"), which covers every inet_aton shorthand
 * (`127.1`, `0x7f.1`, `2130706433`, `0177.0.0.1`) and also the canonical dotted quad. No real
 * top-level domain is numeric, so no name is lost.
 */
export function looksNumeric(host: string): boolean {
  const labels = host.replace(/\.$/, '').split('.');
  const last = labels.at(-1)!.toLowerCase();
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/.test(last);
}
