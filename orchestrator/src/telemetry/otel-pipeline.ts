import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ChosenIds, otelSpanPort } from './otel-span-port';
import type { SpanPort } from './span-port';

export interface OtelPipeline {
  port: SpanPort;
  /** Sends what is buffered and stops; resolves false when `timeoutMs` passed first (spans may be lost). */
  shutdown(timeoutMs: number): Promise<boolean>;
}

/**
 * The OpenTelemetry SDK, loaded here and only here, by dynamic import: a run without telemetry
 * configured never loads it (./start-telemetry.ts decides). Spans go in batches to the OTLP/HTTP
 * (protobuf) exporter, which reads its endpoint, headers, compression and TLS settings from the
 * standard `OTEL_EXPORTER_OTLP_*` variables itself; the resource is gatehouse's, under what
 * `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` say. `exporter` replaces the OTLP one (tests).
 */
export async function startOtelPipeline(o: {
  version: string;
  exportTimeoutMs: number;
  exporter?: SpanExporter;
}): Promise<OtelPipeline> {
  const api = await import('@opentelemetry/api');
  const sdk = await import('@opentelemetry/sdk-trace-base');
  const resources = await import('@opentelemetry/resources');
  const semconv = await import('@opentelemetry/semantic-conventions');
  const exporter =
    o.exporter ??
    new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({
      timeoutMillis: o.exportTimeoutMs,
    });
  const resource = resources
    .defaultResource()
    .merge(
      resources.resourceFromAttributes({
        [semconv.ATTR_SERVICE_NAME]: 'gatehouse',
        [semconv.ATTR_SERVICE_VERSION]: o.version,
      }),
    )
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const ids = new ChosenIds(new sdk.RandomIdGenerator());
  const provider = new sdk.BasicTracerProvider({
    resource,
    idGenerator: ids,
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, { exportTimeoutMillis: o.exportTimeoutMs })],
  });
  const tracer = provider.getTracer('gatehouse', o.version);
  return {
    port: otelSpanPort(api, tracer, ids),
    shutdown: (timeoutMs) => within(provider.shutdown(), timeoutMs),
  };
}

/** Whether `work` settled (either way) within `ms`; the timer never keeps the process alive. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
