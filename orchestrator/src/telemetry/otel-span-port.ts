import type * as Api from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';
import { ERROR_TYPE } from './genai-attributes';
import type { SpanHandle, SpanPort, SpanStart } from './span-port';

/**
 * The SDK's id generator, made to hand out the ids ./trace-ids.ts derives for the next span started
 * (the SDK has no other way to choose a span's ids), random ones otherwise.
 */
export class ChosenIds implements IdGenerator {
  next: { traceId?: string; spanId?: string } = {};
  constructor(private readonly random: IdGenerator) {}
  generateTraceId(): string {
    return this.next.traceId ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    return this.next.spanId ?? this.random.generateSpanId();
  }
}

class OtelSpan implements SpanHandle {
  constructor(
    readonly span: Api.Span,
    private readonly api: typeof Api,
  ) {}
  set(attributes: Record<string, Api.AttributeValue>): void {
    this.span.setAttributes(attributes);
  }
  fail(errorType: string, message?: string): void {
    this.span.setAttribute(ERROR_TYPE, errorType);
    this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  }
  end(at: Date): void {
    this.span.end(at);
  }
}

/** The span port over an SDK tracer whose id generator is `ids`. */
export function otelSpanPort(api: typeof Api, tracer: Api.Tracer, ids: ChosenIds): SpanPort {
  return {
    start(s: SpanStart): SpanHandle {
      const parent =
        s.parent instanceof OtelSpan ? api.trace.setSpan(api.ROOT_CONTEXT, s.parent.span) : api.ROOT_CONTEXT;
      ids.next = {
        ...(s.parent ? {} : s.traceId ? { traceId: s.traceId } : {}),
        ...(s.spanId ? { spanId: s.spanId } : {}),
      };
      try {
        const kind = s.kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
        const span = tracer.startSpan(s.name, { kind, startTime: s.start, attributes: s.attributes }, parent);
        return new OtelSpan(span, api);
      } finally {
        ids.next = {};
      }
    },
  };
}
