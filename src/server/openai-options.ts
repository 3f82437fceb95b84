import { QuarryError } from '../shared/errors.ts';

/** The one model the OpenAI-compatible endpoints offer: Quarry's research. */
export const MODEL = 'quarry';

/** An option Quarry does not implement, and the values that mean what Quarry does anyway. */
export interface DefaultOnly {
  accepts: (value: unknown) => boolean;
  why: string;
}

const noTools: DefaultOnly = {
  accepts: (value) => Array.isArray(value) && value.length === 0,
  why: 'Quarry calls no client tools',
};
const never = (why: string): DefaultOnly => ({ accepts: () => false, why });

/** Options of both endpoints (Chat Completions and Responses) with their default-only values. */
const shared: Record<string, DefaultOnly> = {
  top_p: {
    accepts: (value) => value === 1,
    why: 'Quarry samples with temperature only; send top_p: 1 or leave it out',
  },
  presence_penalty: { accepts: (value) => value === 0, why: 'not supported; send 0 or leave it out' },
  frequency_penalty: { accepts: (value) => value === 0, why: 'not supported; send 0 or leave it out' },
  top_logprobs: { accepts: (value) => value === 0, why: 'Quarry returns no log probabilities' },
  seed: never('research runs are not seeded'),
  tools: noTools,
  tool_choice: { accepts: (value) => value === 'none' || value === 'auto', why: 'Quarry calls no client tools' },
  parallel_tool_calls: never('Quarry calls no client tools'),
  reasoning_effort: never('research depth is a session setting (maxIterations)'),
  service_tier: {
    accepts: (value) => value === 'auto' || value === 'default',
    why: 'Quarry has one service tier',
  },
  store: {
    accepts: (value) => value === true,
    why: 'Quarry keeps every conversation as a session (delete it to remove it)',
  },
  user: { accepts: (value) => typeof value === 'string', why: 'a string naming the end user' },
  safety_identifier: { accepts: (value) => typeof value === 'string', why: 'a string naming the end user' },
};

/** Chat Completions' options Quarry does not implement. */
export const chatDefaults: Record<string, DefaultOnly> = {
  ...shared,
  n: { accepts: (value) => value === 1, why: 'Quarry writes one answer per request; send n: 1 or leave it out' },
  logprobs: { accepts: (value) => value === false, why: 'Quarry returns no log probabilities' },
  logit_bias: {
    accepts: (value) => typeof value === 'object' && value !== null && Object.keys(value).length === 0,
    why: 'not supported',
  },
  stop: { accepts: (value) => value === null, why: 'Quarry ends its answers itself; stop sequences are not supported' },
  max_tokens: never('a research run spends what it needs; cap it with a token budget setting'),
  max_completion_tokens: never('a research run spends what it needs; cap it with a token budget setting'),
  response_format: {
    accepts: (value) => (value as { type?: unknown } | null)?.type === 'text',
    why: 'Quarry answers in Markdown text; send {"type":"text"} or leave it out',
  },
  tool_choice: { accepts: (value) => value === 'none', why: 'Quarry calls no client tools' },
  functions: never('Quarry calls no client functions'),
  function_call: { accepts: (value) => value === 'none', why: 'Quarry calls no client functions' },
  modalities: {
    accepts: (value) => Array.isArray(value) && value.length === 1 && value[0] === 'text',
    why: 'Quarry answers in text only',
  },
  audio: never('Quarry answers in text only'),
  prediction: never('not supported'),
  web_search_options: never('web search is chosen by the server (QUARRY_SEARCH)'),
};

/** The Responses API's options Quarry does not implement. */
export const responsesDefaults: Record<string, DefaultOnly> = {
  ...shared,
  max_output_tokens: never('a research run spends what it needs; cap it with a token budget setting'),
  max_tool_calls: never('Quarry calls no client tools'),
  text: {
    accepts: (value) => (value as { format?: { type?: unknown } } | null)?.format?.type === 'text',
    why: 'Quarry answers in Markdown text; send {"format":{"type":"text"}} or leave it out',
  },
  reasoning: {
    accepts: (value) =>
      typeof value === 'object' && value !== null && Object.values(value).every((each) => each === null),
    why: 'research depth is a session setting (maxIterations)',
  },
  truncation: { accepts: (value) => value === 'disabled', why: 'Quarry windows a long conversation itself' },
  include: noTools,
  conversation: never('a conversation is a session: continue it with previous_response_id'),
  prompt: never('stored prompts are not supported'),
  prompt_cache_key: { accepts: (value) => typeof value === 'string', why: 'a string' },
};

/**
 * Refuses, by name, any option outside `known` that the endpoint does not implement, unless its
 * value means what Quarry does anyway (`unsupported_parameter`, the parameter in `param`).
 */
export function refuseUnsupported(
  body: Record<string, unknown>,
  known: readonly string[],
  defaults: Record<string, DefaultOnly>,
): void {
  for (const [name, value] of Object.entries(body)) {
    if (known.includes(name) || value === undefined || value === null) continue;
    const rule = Object.hasOwn(defaults, name) ? defaults[name] : undefined;
    if (rule?.accepts(value)) continue;
    throw new QuarryError(
      'INVALID_INPUT',
      rule
        ? `Unsupported value for parameter ${name}: ${rule.why}.`
        : `Unrecognized request argument supplied: ${name}. Quarry does not support it.`,
      { details: { field: name, code: 'unsupported_parameter' } },
    );
  }
}

/** A request's `model`: absent or `quarry`; any other is `model_not_found`. */
export function checkModel(model: string | undefined | null): void {
  if (model !== undefined && model !== null && model !== MODEL)
    throw new QuarryError('NOT_FOUND', `The model \`${model}\` does not exist; this server offers \`${MODEL}\`.`, {
      details: { field: 'model', code: 'model_not_found' },
    });
}

/**
 * The text of a message's content parts. A part that is not text (an image, an audio clip, a file)
 * is refused by name: Quarry researches text, and dropping the part silently would answer another
 * question than the one asked.
 */
export function textOfParts(
  parts: readonly { type: string; text?: string }[],
  textTypes: readonly string[],
  field: string,
): string {
  return parts
    .map((part, index) => {
      if (textTypes.includes(part.type)) return part.text ?? '';
      throw new QuarryError(
        'INVALID_INPUT',
        `Content part ${index} of ${field} is ${part.type}: Quarry reads text only (${textTypes.join(', ')}).`,
        { details: { field: `${field}.${index}.type`, code: 'unsupported_content_part' } },
      );
    })
    .join('');
}
