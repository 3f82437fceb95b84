import type { LanguageModel } from 'ai';
import type { ProviderSettings, QuarryConfig } from '../../config/quarry-config.ts';
import { QuarryError } from '../../shared/errors.ts';

export const modelProviders = ['openai', 'anthropic', 'ollama', 'openai-compatible'] as const;
export type ModelProvider = (typeof modelProviders)[number];

/** Prices in US dollars per million tokens (no built-in price list). */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
}

export interface ConfiguredModel {
  /** `provider:model` as the user wrote it. */
  id: string;
  provider: ModelProvider;
  /** Loads the provider's SDK on first use (it is large; most commands never need it). */
  load(): Promise<LanguageModel>;
  price: ModelPrice | null;
  /** The sampling temperature every call to it uses (a session's `temperature`); absent: the provider's default. */
  temperature?: number;
  /**
   * True when the provider enforces a JSON schema itself (OpenAI strict `json_schema`, Anthropic tool
   * use, Ollama `format`, an OpenAI-compatible server with structured outputs on); false when the
   * schema must be written into the prompt and the reply repaired.
   */
  structuredOutputs: boolean;
  /** Provider options sent with structured calls (OpenAI's strict schemas). */
  providerOptions?: Record<string, Record<string, boolean | string | number>>;
}

function lazy(load: () => Promise<LanguageModel>): () => Promise<LanguageModel> {
  let model: Promise<LanguageModel> | null = null;
  return () => {
    // The AI SDK prints its warnings to the console, in the middle of a command's output; the one
    // it gives here (no schema mode: the schema goes in the prompt) is expected and handled.
    (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
    model ??= load();
    return model;
  };
}

function notConfigured(message: string): QuarryError {
  return new QuarryError('MODEL_NOT_CONFIGURED', message, { details: { field: 'model' } });
}

/** Splits `provider:model`; a malformed spec or an unknown provider is `INVALID_INPUT`. */
export function parseModelSpec(spec: string): { provider: ModelProvider; name: string } {
  const separator = spec.indexOf(':');
  if (separator <= 0 || separator === spec.length - 1) {
    throw new QuarryError(
      'INVALID_INPUT',
      `Model "${spec}" must be written provider:model (providers: ${modelProviders.join(', ')}).`,
      { details: { field: 'model' } },
    );
  }
  const provider = spec.slice(0, separator);
  if (!(modelProviders as readonly string[]).includes(provider)) {
    throw new QuarryError(
      'INVALID_INPUT',
      `Unknown model provider "${provider}". Use one of: ${modelProviders.join(', ')}.`,
      { details: { field: 'model' } },
    );
  }
  return { provider: provider as ModelProvider, name: spec.slice(separator + 1) };
}

/**
 * A language model from `provider:model` and the configured providers: `openai:gpt-4.1-mini`
 * (OPENAI_API_KEY, optional OPENAI_BASE_URL), `anthropic:claude-sonnet-4-5` (ANTHROPIC_API_KEY),
 * `ollama:llama3.1` (OLLAMA_BASE_URL), `openai-compatible:<model>` (QUARRY_LLM_BASE_URL,
 * QUARRY_LLM_API_KEY). A missing key is `MODEL_NOT_CONFIGURED` naming it, before anything runs.
 */
export function createLanguageModel(spec: string, config: Pick<QuarryConfig, 'providers' | 'price'>): ConfiguredModel {
  const { provider, name } = parseModelSpec(spec);
  const providers: ProviderSettings = config.providers;
  const base = { id: spec, provider, price: config.price, structuredOutputs: true };
  switch (provider) {
    case 'openai': {
      const { apiKey, baseUrl } = providers.openai;
      if (!apiKey) throw notConfigured('The openai provider needs OPENAI_API_KEY in the environment.');
      // Chat Completions, which every OpenAI-style server speaks (the default would be /v1/responses).
      return {
        ...base,
        load: lazy(async () => (await import('@ai-sdk/openai')).createOpenAI({ apiKey, baseURL: baseUrl }).chat(name)),
        providerOptions: { openai: { strictJsonSchema: true } },
      };
    }
    case 'anthropic': {
      const { apiKey, baseUrl } = providers.anthropic;
      if (!apiKey) throw notConfigured('The anthropic provider needs ANTHROPIC_API_KEY in the environment.');
      return {
        ...base,
        load: lazy(async () =>
          (await import('@ai-sdk/anthropic')).createAnthropic({ apiKey, baseURL: baseUrl }).languageModel(name),
        ),
      };
    }
    case 'ollama': {
      const baseURL = `${providers.ollama.baseUrl.replace(/\/$/, '')}/v1`;
      return {
        ...base,
        load: lazy(async () =>
          (await import('@ai-sdk/openai-compatible'))
            .createOpenAICompatible({ name: 'ollama', baseURL, includeUsage: true, supportsStructuredOutputs: true })
            .chatModel(name),
        ),
      };
    }
    case 'openai-compatible': {
      const { baseUrl, apiKey, structuredOutputs } = providers.openaiCompatible;
      if (!baseUrl) {
        throw notConfigured(
          'The openai-compatible provider needs QUARRY_LLM_BASE_URL (and usually QUARRY_LLM_API_KEY) in the environment.',
        );
      }
      return {
        ...base,
        structuredOutputs,
        load: lazy(async () =>
          (await import('@ai-sdk/openai-compatible'))
            .createOpenAICompatible({
              name: 'openai-compatible',
              baseURL: baseUrl,
              apiKey,
              includeUsage: true,
              supportsStructuredOutputs: structuredOutputs,
            })
            .chatModel(name),
        ),
      };
    }
  }
}
