import { markTracingEnabled } from '../shared/tracing.ts';

/**
 * Starts OpenTelemetry tracing when the operator configured it with the standard environment:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`; `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turn it off. Spans go over OTLP/HTTP (JSON) in batches. Returns the
 * function that flushes and stops it (call it before the process exits), or null when off: the
 * SDK is then never loaded.
 */
export async function startTelemetry(
  defaultServiceName: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<(() => Promise<void>) | null> {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return null;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const { QUARRY_VERSION } = await import('./version.ts');
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the environment detector) win over the default.
  const resource = resources
    .resourceFromAttributes({ 'service.name': defaultServiceName, 'service.version': QUARRY_VERSION })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  markTracingEnabled(true);
  return async () => {
    markTracingEnabled(false);
    await provider.shutdown().catch(() => undefined);
  };
}
