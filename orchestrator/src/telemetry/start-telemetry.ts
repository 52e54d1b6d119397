import type { EventEnvelope } from '@gatehouse/shared';
import { EventSpans } from './event-spans';
import type { OtelPipeline } from './otel-pipeline';
import { flushTimeoutMs, telemetryConfigured } from './telemetry-config';

/** A run's (or a tree's) spans: feed it every event, then end it once. */
export interface RunTelemetry {
  onEvent(e: EventEnvelope): void;
  /** Ends what is open, sends what is buffered; never longer than the flush bound, never throws. */
  end(): Promise<void>;
}

export interface TelemetryOptions {
  version: string;
  /** Told once when something goes wrong (the run goes on without spans). */
  warn: (message: string) => void;
  /** Loads the SDK (default: ./otel-pipeline.ts, by dynamic import); tests replace or watch it. */
  load?: (o: { version: string; exportTimeoutMs: number }) => Promise<OtelPipeline>;
  now?: () => number;
}

/**
 * Telemetry for this process's runs when `env` configures it (./telemetry-config.ts), else undefined
 * without loading anything. Spans are built from the events (./event-spans.ts); a fault in them,
 * or an unreachable collector, never fails a run: spans stop and a warning says why, and the end of
 * the run waits for the collector at most `GATEHOUSE_OTEL_FLUSH_MS`.
 */
export async function startTelemetry(env: NodeJS.ProcessEnv, o: TelemetryOptions): Promise<RunTelemetry | undefined> {
  if (!telemetryConfigured(env)) return undefined;
  const bound = flushTimeoutMs(env);
  const configured = Number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  const exportTimeoutMs = Math.max(
    1,
    Number.isFinite(configured) && configured > 0 ? Math.min(configured, bound) : bound,
  );
  const load = o.load ?? (async (p) => (await import('./otel-pipeline')).startOtelPipeline(p));
  let pipeline: OtelPipeline;
  try {
    pipeline = await load({ version: o.version, exportTimeoutMs });
  } catch (e) {
    o.warn(`OpenTelemetry could not start, the run goes on without spans: ${(e as Error).message}`);
    return undefined;
  }
  const spans = new EventSpans(pipeline.port, (o.now ?? Date.now)());
  let broken = false;
  return {
    onEvent(e) {
      if (broken) return;
      try {
        spans.onEvent(e);
      } catch (err) {
        broken = true;
        o.warn(`OpenTelemetry spans stopped (the run goes on): ${(err as Error).message}`);
      }
    },
    async end() {
      try {
        if (!broken) spans.endAll(new Date());
      } catch {
        // ending spans is best effort: what was ended is still sent below
      }
      const sent = await pipeline.shutdown(bound);
      if (!sent) o.warn(`OpenTelemetry: the collector did not take the spans within ${bound} ms; some may be lost`);
    },
  };
}
