import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { startOtelPipeline, type OtelPipeline } from '../../src/telemetry/otel-pipeline';
import { startTelemetry } from '../../src/telemetry/start-telemetry';
import { flushTimeoutMs, telemetryConfigured } from '../../src/telemetry/telemetry-config';
import { eventWriter } from './tree-events';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' };

describe('telemetryConfigured', () => {
  it('only an OTLP endpoint turns it on, and the standard switches turn it off', () => {
    expect(telemetryConfigured({})).toBe(false);
    expect(telemetryConfigured({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toBe(false);
    expect(telemetryConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
    expect(telemetryConfigured(ENDPOINT)).toBe(true);
    expect(telemetryConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:1/v1/traces' })).toBe(true);
    expect(telemetryConfigured({ ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(telemetryConfigured({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('the flush bound: 5 s by default, GATEHOUSE_OTEL_FLUSH_MS within 0..60 s', () => {
    expect(flushTimeoutMs({})).toBe(5000);
    expect(flushTimeoutMs({ GATEHOUSE_OTEL_FLUSH_MS: '250' })).toBe(250);
    expect(flushTimeoutMs({ GATEHOUSE_OTEL_FLUSH_MS: 'soon' })).toBe(5000);
    expect(flushTimeoutMs({ GATEHOUSE_OTEL_FLUSH_MS: '999999' })).toBe(60_000);
  });
});

describe('startTelemetry', () => {
  const warnings: string[] = [];
  const warn = (m: string) => void warnings.push(m);

  it('without an endpoint: nothing is loaded, no exporter made', async () => {
    let loads = 0;
    const load = async (): Promise<OtelPipeline> => {
      loads++;
      throw new Error('must not load');
    };
    expect(await startTelemetry({}, { version: 't', warn, load })).toBeUndefined();
    expect(
      await startTelemetry({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' }, { version: 't', warn, load }),
    ).toBeUndefined();
    expect(loads).toBe(0);
  });

  it('the export timeout is the smaller of the OTLP timeout and the flush bound', async () => {
    const asked: number[] = [];
    const load = async (o: { exportTimeoutMs: number }): Promise<OtelPipeline> => {
      asked.push(o.exportTimeoutMs);
      return { port: { start: () => ({ set() {}, fail() {}, end() {} }) }, shutdown: async () => true };
    };
    await startTelemetry({ ...ENDPOINT }, { version: 't', warn, load });
    await startTelemetry({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TIMEOUT: '800' }, { version: 't', warn, load });
    await startTelemetry(
      { ...ENDPOINT, OTEL_EXPORTER_OTLP_TIMEOUT: '30000', GATEHOUSE_OTEL_FLUSH_MS: '700' },
      { version: 't', warn, load },
    );
    expect(asked).toEqual([5000, 800, 700]);
  });

  it('an SDK that fails to start, or spans that throw, never reach the run: a warning, once', async () => {
    warnings.length = 0;
    const broken = async (): Promise<OtelPipeline> => {
      throw new Error('no such module');
    };
    expect(await startTelemetry(ENDPOINT, { version: 't', warn, load: broken })).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/could not start.*no such module/);
    const throwing = async (): Promise<OtelPipeline> => ({
      port: {
        start: () => {
          throw new Error('boom');
        },
      },
      shutdown: async () => true,
    });
    const t = (await startTelemetry(ENDPOINT, { version: 't', warn, load: throwing, now: () => 0 }))!;
    const ev = eventWriter(Date.now());
    const started = ev('run_a', null, 0, 'run.started', { task: 't', mode: 'm', surface: [] });
    expect(() => t.onEvent(started)).not.toThrow();
    expect(() => t.onEvent(ev('run_a', null, 1, 'run.completed', { status: 'final', stopReason: 'x' }))).not.toThrow();
    await t.end();
    expect(warnings.filter((w) => w.includes('spans stopped'))).toHaveLength(1);
  });

  it('an exporter that never answers: the end waits the flush bound, then the run goes on', async () => {
    warnings.length = 0;
    const hanging: SpanExporter = {
      export: () => undefined, // never calls back
      shutdown: () => new Promise(() => undefined),
    };
    const load = (o: { version: string; exportTimeoutMs: number }) => startOtelPipeline({ ...o, exporter: hanging });
    const env = { ...ENDPOINT, GATEHOUSE_OTEL_FLUSH_MS: '300' };
    const t = (await startTelemetry(env, { version: 't', warn, load, now: () => 0 }))!;
    const ev = eventWriter(Date.now());
    t.onEvent(ev('run_a', null, 0, 'run.started', { task: 't', mode: 'm', surface: [] }));
    t.onEvent(ev('run_a', null, 1, 'run.completed', { status: 'final', stopReason: 'x' }));
    const started = Date.now();
    await t.end();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2000);
    expect(warnings).toEqual(['OpenTelemetry: the collector did not take the spans within 300 ms; some may be lost']);
  });
});
