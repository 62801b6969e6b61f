import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Config } from '../config/config.js';
import { markTracingOn } from './tracing.js';

export interface TracingHandle {
  /** Exports what is still buffered and stops; called last on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * Registers this process's tracer provider, exporting over OTLP/HTTP (JSON) to
 * `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces` in batches. Loaded by src/main.ts only when an endpoint is
 * configured, so a node without one never loads the SDK. Sampling follows the caller's decision when a
 * traceparent arrives, else `TRACING_SAMPLE_RATIO` (docs/decisions/840).
 */
export function startTracing(cfg: Config['tracing'], nodeId: string): TracingHandle {
  if (!cfg.endpoint) throw new Error('startTracing needs an OTLP endpoint');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.serviceName, 'service.instance.id': nodeId }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(cfg.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${cfg.endpoint.replace(/\/+$/, '')}/v1/traces` }),
        scheduledDelayMillis: cfg.exportDelayMs,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  markTracingOn();
  return {
    async shutdown() {
      markTracingOn(false);
      await provider.shutdown().catch(() => undefined);
    },
  };
}
