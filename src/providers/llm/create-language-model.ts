import type { LanguageModel } from 'ai';
import { QuarryError } from '../../store/errors.ts';

export const modelProviders = ['openai', 'anthropic', 'ollama', 'openai-compatible'] as const;

/** Prices in US dollars per million tokens, from `QUARRY_PRICE_PER_MTOK="input,output"` (no built-in price list). */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
}

export interface ConfiguredModel {
  /** `provider:model` as the user wrote it. */
  id: string;
  /** Loads the provider's SDK on first use (it is large; most commands never need it). */
  load(): Promise<LanguageModel>;
  price: ModelPrice | null;
}

function lazy(load: () => Promise<LanguageModel>): () => Promise<LanguageModel> {
  let model: Promise<LanguageModel> | null = null;
  return () => (model ??= load());
}

function invalid(message: string): QuarryError {
  return new QuarryError('INVALID_INPUT', message, { details: { field: 'model' } });
}

/**
 * A language model from `provider:model` and the environment: `openai:gpt-4.1-mini`
 * (OPENAI_API_KEY, optional OPENAI_BASE_URL), `anthropic:claude-sonnet-4-5` (ANTHROPIC_API_KEY),
 * `ollama:llama3.1` (OLLAMA_BASE_URL, default http://127.0.0.1:11434), `openai-compatible:<model>`
 * (QUARRY_LLM_BASE_URL, QUARRY_LLM_API_KEY). Keys are read here and never stored.
 */
export function createLanguageModel(spec: string, env: NodeJS.ProcessEnv = process.env): ConfiguredModel {
  const separator = spec.indexOf(':');
  if (separator <= 0 || separator === spec.length - 1) throw invalid(`Model "${spec}" must be written provider:model (providers: ${modelProviders.join(', ')}).`);
  const provider = spec.slice(0, separator);
  const name = spec.slice(separator + 1);
  const price = parsePrice(env.QUARRY_PRICE_PER_MTOK);
  switch (provider) {
    case 'openai': {
      if (!env.OPENAI_API_KEY) throw invalid('The openai provider needs OPENAI_API_KEY in the environment.');
      // Chat Completions, which every OpenAI-style server speaks (the default would be /v1/responses).
      const { OPENAI_API_KEY: apiKey, OPENAI_BASE_URL: baseURL } = env;
      return { id: spec, load: lazy(async () => (await import('@ai-sdk/openai')).createOpenAI({ apiKey, baseURL }).chat(name)), price };
    }
    case 'anthropic': {
      if (!env.ANTHROPIC_API_KEY) throw invalid('The anthropic provider needs ANTHROPIC_API_KEY in the environment.');
      const { ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: baseURL } = env;
      return { id: spec, load: lazy(async () => (await import('@ai-sdk/anthropic')).createAnthropic({ apiKey, baseURL }).languageModel(name)), price };
    }
    case 'ollama': {
      const base = (env.OLLAMA_BASE_URL ?? 'http://127.0.0.1:11434').replace(/\/$/, '');
      return { id: spec, load: lazy(async () => (await import('@ai-sdk/openai-compatible')).createOpenAICompatible({ name: 'ollama', baseURL: `${base}/v1`, includeUsage: true }).chatModel(name)), price };
    }
    case 'openai-compatible': {
      if (!env.QUARRY_LLM_BASE_URL) throw invalid('The openai-compatible provider needs QUARRY_LLM_BASE_URL (and usually QUARRY_LLM_API_KEY).');
      const { QUARRY_LLM_BASE_URL: baseURL, QUARRY_LLM_API_KEY: apiKey } = env;
      return {
        id: spec,
        load: lazy(async () => (await import('@ai-sdk/openai-compatible')).createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey, includeUsage: true }).chatModel(name)),
        price,
      };
    }
    default:
      throw invalid(`Unknown model provider "${provider}". Use one of: ${modelProviders.join(', ')}.`);
  }
}

function parsePrice(value: string | undefined): ModelPrice | null {
  if (!value) return null;
  const [input, output] = value.split(',').map(Number);
  if (!Number.isFinite(input) || !Number.isFinite(output)) return null;
  return { inputPerMillion: input!, outputPerMillion: output! };
}
