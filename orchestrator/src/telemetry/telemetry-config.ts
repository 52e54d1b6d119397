/**
 * Whether spans are to be sent, from the standard OpenTelemetry variables: an OTLP endpoint for
 * traces (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`), unless
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Nothing else turns telemetry on: without
 * an endpoint the SDK is never loaded, so no default endpoint is ever tried.
 */
export function telemetryConfigured(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return true;
}

/** How long the end of a run may wait for spans to be sent: `GATEHOUSE_OTEL_FLUSH_MS`, default 5 s, at most 60 s. */
export function flushTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env.GATEHOUSE_OTEL_FLUSH_MS?.trim();
  const n = raw ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.min(n, 60_000) : 5_000;
}
