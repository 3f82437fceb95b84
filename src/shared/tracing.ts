import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * Quarry's spans, through the OpenTelemetry API only: without an SDK (the default: no `OTEL_*`
 * endpoint is set) every call here is a no-op. `config/telemetry.ts` starts the SDK when an
 * operator asks for traces.
 */
const tracer = () => trace.getTracer('quarry');

let enabled = false;

/** Set by the SDK when it starts: model calls then ask the AI SDK for its own GenAI spans. */
export function markTracingEnabled(on: boolean): void {
  enabled = on;
}

export function tracingEnabled(): boolean {
  return enabled;
}

/**
 * Runs `work` in a span (a child of the active one, or of `parent`), recording a thrown error.
 * `expected(error)` marks errors that end work on purpose (a stop, a wait for input): they end
 * the span without an error status.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  options: { parent?: Context; kind?: SpanKind; expected?: (error: unknown) => boolean } = {},
): Promise<T> {
  return tracer().startActiveSpan(
    name,
    { attributes, kind: options.kind ?? SpanKind.INTERNAL },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        if (!options.expected?.(error)) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
        }
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * A span for work that already happened, from `start` to now, recorded only when it is worth a
 * trace: a claim that found a session (an idle poll every few seconds would be a root trace each).
 */
export function recordSpan(
  name: string,
  start: Date,
  attributes: Attributes,
  error?: unknown,
  kind: SpanKind = SpanKind.INTERNAL,
): void {
  const span = tracer().startSpan(name, { attributes, startTime: start, kind });
  if (error !== undefined) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
  }
  span.end();
}

/** The active span's W3C `traceparent`, to store beside work another process will run; null when tracing is off. */
export function currentTraceContext(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored `traceparent` continues (the root context when there is none). */
export function traceContextFrom(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/** True when a context carries a caller's trace (a `traceparent` was sent). */
export function continuesTrace(parent: Context): boolean {
  return trace.getSpanContext(parent) !== undefined;
}

/** The context of incoming HTTP headers (`traceparent`, `tracestate`). */
export function traceContextOfHeaders(headers: Record<string, string>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/**
 * The AI SDK's telemetry switch for a model call: GenAI spans (`gen_ai.*`) when tracing is on;
 * prompts and completions only when the operator opts in with
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
 */
export function modelTelemetry(functionId: string) {
  const content = process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true';
  return { isEnabled: enabled, functionId, recordInputs: content, recordOutputs: content };
}

/**
 * A model call as the OpenTelemetry GenAI conventions name it: a client span `chat <model>` with
 * `gen_ai.operation.name`, `gen_ai.provider.name` (the provider of `provider:model`),
 * `gen_ai.request.model` and, when it ends, the tokens it used. The AI SDK's own spans (with the
 * prompt only when the operator opts in) nest under it.
 */
export function inModelCall<T extends { usage?: { inputTokens?: number; outputTokens?: number } }>(
  modelId: string,
  work: () => Promise<T>,
): Promise<T> {
  const colon = modelId.indexOf(':');
  const provider = colon > 0 ? modelId.slice(0, colon) : modelId;
  const model = colon > 0 ? modelId.slice(colon + 1) : modelId;
  return inSpan(
    `chat ${model}`,
    { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': provider, 'gen_ai.request.model': model },
    async (span) => {
      const result = await work();
      span.setAttributes({
        'gen_ai.usage.input_tokens': result.usage?.inputTokens ?? 0,
        'gen_ai.usage.output_tokens': result.usage?.outputTokens ?? 0,
      });
      return result;
    },
    { kind: SpanKind.CLIENT },
  );
}

export { SpanKind };
