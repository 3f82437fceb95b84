import { createHash } from 'node:crypto';
import type { ChatRequest } from './fake-openai-server.ts';

/**
 * How the fake model behaves:
 * - `honor`: answers in the requested JSON schema (the `response_format`, or a schema written into
 *   the prompt), its strings copied from the request's own text;
 * - `prose`: ignores `response_format` and wraps its JSON in chatty prose and a code fence;
 * - `invent`: answers in the schema, but every second item of a list is made up (quotes no source
 *   holds, ids nobody gave it), and its prose cites sources that do not exist.
 */
export type FakeBehavior = 'honor' | 'prose' | 'invent';

export interface SchemaFakeOptions {
  behavior?: FakeBehavior;
  /** The value of every boolean (`true`: research ends after one iteration; `false`: it keeps going). */
  booleans?: boolean;
  /** The first attempt of each structured request breaks the schema (to exercise retries). */
  firstAttemptInvalid?: boolean;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
};

/** What the inventing model makes up. */
export const INVENTED = [
  'A 2031 survey found that every tidal station on Earth is powered by moonlight alone.',
  'The Atlantic barrage of Greenland produces forty terawatts around the clock.',
  'Engineers agree that turbines stop working whenever the sea is calm.',
];

function hash(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

function lastUser(request: ChatRequest): string {
  return [...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
}

/** The first user message: the task, before any retry asked for a correction. */
function firstUser(request: ChatRequest): string {
  return request.messages.find((message) => message.role === 'user')?.content ?? '';
}

/**
 * The schema a request asks for — its `response_format`, else a JSON Schema written at the end of its
 * prompt — and the prompt's text without it.
 */
function requestedSchema(request: ChatRequest): { schema: JsonSchema | null; text: string } {
  const text = firstUser(request);
  const format = request.response_format;
  if (format?.type === 'json_schema' && format.json_schema?.schema)
    return { schema: format.json_schema.schema as JsonSchema, text };
  const end = text.lastIndexOf('}');
  for (let at = text.indexOf('{'); at >= 0 && at < end; at = text.indexOf('{', at + 1)) {
    try {
      const candidate = JSON.parse(text.slice(at, end + 1)) as JsonSchema;
      if (candidate && typeof candidate === 'object' && candidate.properties)
        return { schema: candidate, text: text.slice(0, at) };
    } catch {
      // Not a JSON object starting here; the schema may start later.
    }
  }
  return { schema: format?.type === 'json_object' ? { type: 'object', properties: {} } : null, text };
}

/** Sentences of the request's text a model could copy. */
function material(text: string): string[] {
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.replace(/^[-*\s]+/, '').trim())
    .filter((sentence) => sentence.length >= 25 && sentence.length <= 400 && /[a-z]{3}/.test(sentence));
  return sentences.length ? sentences : [text.trim().slice(0, 200) || 'Nothing to say.'];
}

function shorten(sentence: string): string {
  return sentence
    .replace(/[^\p{L}\p{N}\s-]/gu, ' ')
    .split(/\s+/)
    .filter((word) => word.length > 2)
    .slice(0, 6)
    .join(' ');
}

/** A value for `schema`, built from the request's own sentences (deterministic per request). */
function generate(
  schema: JsonSchema,
  context: { sentences: string[]; seed: string; options: Required<SchemaFakeOptions> },
  path: string,
  position: number,
  inStringArray = false,
): unknown {
  const { sentences, seed, options } = context;
  const pick = (salt: string) => hash(`${seed}:${path}:${salt}`);
  if (schema.anyOf?.length) return generate(schema.anyOf[0]!, context, path, position, inStringArray);
  const type = Array.isArray(schema.type) ? schema.type.find((each) => each !== 'null') : schema.type;
  // An inventing model makes up every second item it lists, ids too (`invented-N`, below).
  if (schema.enum?.length && !(options.behavior === 'invent' && position % 2 === 1))
    return schema.enum[pick(String(position)) % schema.enum.length];
  switch (type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(schema.properties ?? {}))
        value[name] = generate(property, context, `${path}.${name}`, position);
      return value;
    }
    case 'array': {
      const items = schema.items ?? { type: 'string' };
      const stringItems = items.type === 'string' && !items.enum;
      return Array.from({ length: items.enum ? Math.min(3, items.enum.length) : 3 }, (_, index) =>
        generate(items, context, `${path}[${index}]`, index, stringItems),
      );
    }
    case 'boolean':
      return options.booleans;
    case 'integer':
    case 'number':
      // Items of an array are numbered 1, 2, 3 — as a model numbers what it was asked about.
      return position + 1;
    default: {
      if (schema.enum?.length) return `invented-${pick('id') % 1000}`;
      // An inventing model makes up every second item it lists (the first is always real, so some
      // of what it says can be checked and cited, whatever the request).
      if (options.behavior === 'invent' && position % 2 === 1) return INVENTED[pick('which') % INVENTED.length]!;
      const sentence = sentences[pick(String(position)) % sentences.length]!;
      return inStringArray ? shorten(sentence) : sentence;
    }
  }
}

/** A prose reply: the request's numbered material restated with its `[n]` markers (or a title-like line). */
function proseReply(request: ChatRequest, options: Required<SchemaFakeOptions>): string {
  const text = lastUser(request);
  const cited = text
    .split('\n')
    .map((line) => /\[(\d+)\]\s*(.+)/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({
      number: Number(match[1]),
      claim: match[2]!
        .split(/ — | \(/)[0]!
        .trim()
        .replace(/[.!?]$/, ''),
    }));
  if (options.behavior === 'invent') {
    const real = cited[0] ? ` ${cited[0].claim} [${cited[0].number}].` : '';
    return `${INVENTED[0]!.replace(/\.$/, '')} [7].${real} ${INVENTED[1]!.replace(/\.$/, '')} [42]. ${INVENTED[2]}`;
  }
  if (cited.length > 0)
    return cited
      .slice(0, 3)
      .map(({ number, claim }) => `${claim} [${number}].`)
      .join(' ');
  const last =
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? 'Untitled';
  return last.replace(/^[\p{L} ]+:\s*/u, '').slice(0, 80);
}

/**
 * A fake model that answers any request generically — from the schema it is asked for and the text
 * it is given — never from canned replies keyed on Quarry's prompts. The same request always gets
 * the same reply.
 */
export function schemaFakeModel(options: SchemaFakeOptions = {}): (request: ChatRequest) => string {
  const settled: Required<SchemaFakeOptions> = {
    behavior: options.behavior ?? 'honor',
    booleans: options.booleans ?? true,
    firstAttemptInvalid: options.firstAttemptInvalid ?? false,
  };
  return (request) => {
    const { schema, text } = requestedSchema(request);
    if (!schema) return proseReply(request, settled);
    const firstAttempt = request.messages.filter((message) => message.role === 'user').length === 1;
    if (settled.firstAttemptInvalid && firstAttempt) return JSON.stringify({ unexpected: 'shape' });
    const value = generate(
      schema,
      { sentences: material(text), seed: JSON.stringify(request.messages), options: settled },
      '$',
      0,
    );
    const json = JSON.stringify(value);
    const honorsFormat = settled.behavior !== 'prose';
    return honorsFormat
      ? json
      : `Sure — here is what you asked for:\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n\nLet me know if you need anything else.`;
  };
}
