/**
 * A decoder of OTLP's ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1), written
 * from the .proto field numbers so the tests read what an OTLP/HTTP protobuf exporter really sent,
 * without trusting the SDK's own encoder to decode it. Only what the tests look at is kept.
 */
export type AttrValue = string | number | boolean | AttrValue[] | null;

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  resource: Record<string, AttrValue>;
  scope: string;
}

type Field = { no: number; wire: number; value: bigint | Uint8Array };

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (let n = 0; n < 10; n++) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
    throw new Error('bad varint');
  };
  const fixed = (bytes: number): bigint => {
    let v = 0n;
    for (let k = bytes - 1; k >= 0; k--) v = (v << 8n) | BigInt(buf[i + k]!);
    i += bytes;
    return v;
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) out.push({ no, wire, value: fixed(8) });
    else if (wire === 5) out.push({ no, wire, value: fixed(4) });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, value: buf.subarray(i, i + len) });
      i += len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (v: Field['value']): string => Buffer.from(v as Uint8Array).toString('utf8');
const hex = (v: Field['value']): string => Buffer.from(v as Uint8Array).toString('hex');
const all = (fs: Field[], no: number): Field[] => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number): Field | undefined => fs.find((f) => f.no === no);

function anyValue(buf: Uint8Array): AttrValue {
  const f = fields(buf)[0];
  if (!f) return null;
  switch (f.no) {
    case 1:
      return text(f.value);
    case 2:
      return f.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.value as bigint));
    case 4:
      return new Float64Array(new BigUint64Array([f.value as bigint]).buffer)[0]!;
    case 5:
      return all(fields(f.value as Uint8Array), 1).map((v) => anyValue(v.value as Uint8Array));
    default:
      return null;
  }
}

function attributes(fs: Field[], no: number): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of all(fs, no)) {
    const k = fields(kv.value as Uint8Array);
    const key = one(k, 1);
    const value = one(k, 2);
    if (key) out[text(key.value)] = value ? anyValue(value.value as Uint8Array) : null;
  }
  return out;
}

export function decodeTraceRequest(body: Uint8Array): DecodedSpan[] {
  const spans: DecodedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const r = fields(rs.value as Uint8Array);
    const res = one(r, 1);
    const resource = res ? attributes(fields(res.value as Uint8Array), 1) : {};
    for (const ss of all(r, 2)) {
      const s = fields(ss.value as Uint8Array);
      const sc = one(s, 1);
      const scopeName = sc ? one(fields(sc.value as Uint8Array), 1) : undefined;
      for (const sp of all(s, 2)) {
        const f = fields(sp.value as Uint8Array);
        const status = one(f, 15);
        const st = status ? fields(status.value as Uint8Array) : [];
        spans.push({
          traceId: hex(one(f, 1)?.value ?? new Uint8Array()),
          spanId: hex(one(f, 2)?.value ?? new Uint8Array()),
          parentSpanId: hex(one(f, 4)?.value ?? new Uint8Array()),
          name: text(one(f, 5)?.value ?? new Uint8Array()),
          kind: Number(one(f, 6)?.value ?? 0n),
          startNs: (one(f, 7)?.value as bigint) ?? 0n,
          endNs: (one(f, 8)?.value as bigint) ?? 0n,
          attributes: attributes(f, 9),
          statusCode: Number(one(st, 3)?.value ?? 0n),
          statusMessage: text(one(st, 2)?.value ?? new Uint8Array()),
          resource,
          scope: scopeName ? text(scopeName.value) : '',
        });
      }
    }
  }
  return spans;
}
