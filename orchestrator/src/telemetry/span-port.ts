/**
 * What the event-to-span mapping needs from a tracer, so the mapping (./event-spans.ts) stays free of
 * the OpenTelemetry SDK, which is loaded only when telemetry is configured (./otel-span-port.ts).
 */
export type SpanAttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanAttributeValue>;

export interface SpanHandle {
  set(attributes: SpanAttributes): void;
  /** Status ERROR, with `error.type` (a low-cardinality name) and a short message. */
  fail(errorType: string, message?: string): void;
  end(at: Date): void;
}

export interface SpanStart {
  name: string;
  kind: 'internal' | 'client';
  start: Date;
  attributes: SpanAttributes;
  /** The parent span; absent: a root span of the trace `traceId`. */
  parent?: SpanHandle;
  /** The trace of a root span (32 hex digits). */
  traceId?: string;
  /** A chosen span id (16 hex digits); absent: a random one. */
  spanId?: string;
}

export interface SpanPort {
  start(span: SpanStart): SpanHandle;
}
