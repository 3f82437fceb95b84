import type { ModelMessage } from 'ai';
import { z } from 'zod';
import type { ConfiguredModel } from '../../providers/llm/create-language-model.ts';
import { QuarryError } from '../../shared/errors.ts';
import { modelTelemetry } from '../../shared/tracing.ts';
import type { TokenUsage } from '../analyst.ts';
import { asModelError } from './model-error.ts';

/** Attempts per structured call: the first, then retries with the validation error shown to the model. */
export const STRUCTURED_ATTEMPTS = 3;

/** Tokens and cost of one reply, by the model's price (no price: no cost). */
export function usageOf(
  model: ConfiguredModel,
  usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined,
): TokenUsage {
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  const costUsd = model.price
    ? (inputTokens * model.price.inputPerMillion + outputTokens * model.price.outputPerMillion) / 1_000_000
    : 0;
  return { inputTokens, outputTokens, totalTokens: usage?.totalTokens ?? inputTokens + outputTokens, costUsd };
}

export function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  return {
    inputTokens: (total.inputTokens ?? 0) + (more.inputTokens ?? 0),
    outputTokens: (total.outputTokens ?? 0) + (more.outputTokens ?? 0),
    totalTokens: (total.totalTokens ?? 0) + (more.totalTokens ?? 0),
    costUsd: (total.costUsd ?? 0) + (more.costUsd ?? 0),
  };
}

/**
 * The JSON object a reply holds when a model wraps it in prose or a code fence: the fenced block,
 * else the text from the first `{` to its matching `}`. Null when there is none.
 */
export function extractJson(text: string): string | null {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1]?.trim();
  if (fenced?.startsWith('{')) return fenced;
  const start = text.indexOf('{');
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let at = start; at < text.length; at++) {
    const char = text[at];
    if (inString) {
      if (char === '\\') at++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return text.slice(start, at + 1);
  }
  return null;
}

/** The schema in words the model can follow, for providers that cannot enforce one. */
export function schemaInstruction(schema: z.ZodType): string {
  return `Reply with one JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(z.toJSONSchema(schema))}`;
}

/**
 * The user prompt as sent: the schema written into it when the provider cannot enforce one (so the
 * prompt journaled with the step is exactly what the model saw).
 */
export function structuredPrompt(model: ConfiguredModel, prompt: string, schema: z.ZodType): string {
  return model.structuredOutputs ? prompt : `${prompt}\n\n${schemaInstruction(schema)}`;
}

export interface StructuredCallOptions<S extends z.ZodType> {
  model: ConfiguredModel;
  system: string;
  /** The prompt as sent, from `structuredPrompt`. */
  prompt: string;
  schema: S;
  /** Names the object for providers that use a tool or a named schema. */
  name: string;
  signal: AbortSignal;
}

/**
 * One structured call through the AI SDK (`generateText` with `Output.object`): the provider's own
 * JSON-schema mode when it has one (strict `json_schema`, tool use, `format`), else the schema in
 * the prompt. A reply wrapped in prose or a code fence is repaired (the JSON inside it is used); a
 * reply that still does not validate is retried with the validation error shown to the model. Usage
 * and cost are summed over every attempt.
 */
export async function structuredCall<S extends z.ZodType>(
  options: StructuredCallOptions<S>,
): Promise<{ output: z.infer<S>; usage: TokenUsage }> {
  const {
    generateText,
    Output,
    NoObjectGeneratedError,
    NoOutputGeneratedError,
    wrapLanguageModel,
    extractJsonMiddleware,
  } = await import('ai');
  const { model, schema, signal, prompt } = options;
  const languageModel = wrapLanguageModel({
    model: (await model.load()) as Parameters<typeof wrapLanguageModel>[0]['model'],
    middleware: extractJsonMiddleware({ transform: (text) => extractJson(text) ?? text }),
  });
  let messages: ModelMessage[] = [{ role: 'user', content: prompt }];
  let total: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 };
  let lastError = '';
  for (let attempt = 1; attempt <= STRUCTURED_ATTEMPTS; attempt++) {
    let text = '';
    try {
      const result = await generateText({
        model: languageModel,
        output: Output.object({ schema, name: options.name }),
        system: options.system,
        messages,
        abortSignal: signal,
        maxRetries: 0,
        ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
        ...(model.providerOptions ? { providerOptions: model.providerOptions } : {}),
        experimental_telemetry: modelTelemetry(`quarry.${options.name}`),
      });
      total = addUsage(total, usageOf(model, result.usage));
      text = result.text;
      return { output: result.output as z.infer<S>, usage: total };
    } catch (error) {
      if (NoObjectGeneratedError.isInstance(error)) {
        total = addUsage(total, usageOf(model, error.usage));
        text = error.text ?? '';
        lastError = describe(error.cause ?? error);
      } else if (NoOutputGeneratedError.isInstance(error)) {
        lastError = 'the reply was empty';
      } else throw asModelError(error, model.id);
    }
    messages = [
      ...messages,
      { role: 'assistant', content: text },
      {
        role: 'user',
        content: `That reply was invalid: ${lastError}. Reply again with one JSON object in exactly the requested shape.`,
      },
    ];
  }
  throw new QuarryError(
    'STEP_FAILED',
    `The model ${model.id} gave no valid structured reply in ${STRUCTURED_ATTEMPTS} attempts: ${lastError}`,
    { details: { model: model.id } },
  );
}

/** A validation or parse failure in a sentence the model can act on. */
function describe(error: unknown): string {
  const issues =
    (error as { cause?: { issues?: { path: PropertyKey[]; message: string }[] } }).cause?.issues ??
    (error as { issues?: { path: PropertyKey[]; message: string }[] }).issues;
  if (issues?.length)
    return issues.map((issue) => `${issue.path.map(String).join('.') || 'reply'}: ${issue.message}`).join('; ');
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
