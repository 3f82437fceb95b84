import { z } from 'zod';
import type { ConfiguredModel } from '../providers/llm/create-language-model.ts';
import { QuarryError } from '../store/errors.ts';
import type { Analyst, AnalystCall, TokenUsage } from './analyst.ts';
import { reportWords, type ResearchSettings } from './research-settings.ts';
import type { Note, Outline } from './research-types.ts';

const planSchema = z.object({ queries: z.array(z.string().min(1)).min(1) });
const notesSchema = z.object({ notes: z.array(z.object({ quote: z.string(), note: z.string().min(1) })) });
const analysisSchema = z.object({ done: z.boolean(), reason: z.string(), nextQueries: z.array(z.string()) });
const outlineSchema = z.object({ title: z.string().min(1), sections: z.array(z.object({ title: z.string().min(1), focus: z.string(), noteIds: z.array(z.string()) })).min(1) });
const assessmentSchema = z.object({ action: z.enum(['answer', 'research']), reason: z.string() });

/** Attempts per structured call: the first, then retries with the validation error shown to the model. */
const STRUCTURED_ATTEMPTS = 3;

function systemPrompt(settings: ResearchSettings, role: string): string {
  const parts = [`You are a careful research analyst. ${role}`, `Write in ${settings.language}.`];
  if (settings.systemInstruction) parts.push(`Instructions from the user, which shape everything you write: ${settings.systemInstruction}`);
  return parts.join('\n');
}

/** The first JSON object in a reply (models wrap JSON in fences or prose). */
export function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1];
  const candidate = fenced ?? text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
  return JSON.parse(candidate);
}

function notesForPrompt(notes: Note[], citationFor?: Record<string, number>): string {
  return notes.map((note) => `- [${citationFor ? citationFor[note.url] : note.id}] ${note.text} (source: ${note.title})`).join('\n');
}

/** Reasoning through a language model (any AI SDK provider), structured outputs validated with zod. */
export class LlmAnalyst implements Analyst {
  readonly usesModel = true;
  readonly name: string;

  constructor(
    private readonly main: ConfiguredModel,
    private readonly fast: ConfiguredModel = main,
  ) {
    this.name = main.id;
  }

  title(question: string, settings: ResearchSettings) {
    return this.text(this.fast, systemPrompt(settings, 'You name research sessions.'), `Give a short title (at most 8 words) for this research question. Reply with the title only, no quotes.\n\nQuestion: ${question}`, (text) => text.trim().replace(/^["']|["']$/g, '').slice(0, 120));
  }

  plan({ question, settings, context }: Parameters<Analyst['plan']>[0]) {
    const prompt = `Plan the research for this question. Reply with JSON only: {"queries": [${settings.queriesPerIteration} search queries, most important first]}.\n\n${context ? `Conversation so far:\n${context}\n\n` : ''}Question: ${question}`;
    return this.structured(this.main, systemPrompt(settings, 'You plan searches.'), prompt, planSchema, (value) => ({ queries: value.queries.slice(0, settings.queriesPerIteration) }));
  }

  takeNotes({ question, source, iteration, idPrefix, settings }: Parameters<Analyst['takeNotes']>[0]) {
    const prompt = `Take notes from this source for the question. Reply with JSON only: {"notes": [{"quote": "an exact sentence copied from the source", "note": "what it tells us, in one sentence"}]}, at most 4 notes, none when the source is irrelevant.\n\nQuestion: ${question}\n\nSource: ${source.title} (${source.url})\n\n${source.text.slice(0, 12_000)}`;
    return this.structured(this.fast, systemPrompt(settings, 'You extract facts with their exact quotes.'), prompt, notesSchema, (value) =>
      value.notes.map((item, index): Note => {
        const at = item.quote ? source.text.indexOf(item.quote) : -1;
        return {
          id: `${idPrefix}-${index}`,
          url: source.url,
          title: source.title,
          text: item.note,
          ...(at >= 0 ? { start: source.offset + at, end: source.offset + at + item.quote.length } : {}),
          query: source.query,
          iteration,
        };
      }),
    );
  }

  analyze({ question, notes, iteration, asked, settings }: Parameters<Analyst['analyze']>[0]) {
    const prompt = `Judge whether these notes answer the question. Reply with JSON only: {"done": true|false, "reason": "...", "nextQueries": ["new searches for the gaps"]}. This was iteration ${iteration} of at most ${settings.maxIterations}. Do not repeat asked queries.\n\nQuestion: ${question}\n\nAsked: ${asked.join('; ')}\n\nNotes:\n${notesForPrompt(notes)}`;
    return this.structured(this.main, systemPrompt(settings, 'You judge coverage and find gaps.'), prompt, analysisSchema, (value) => value);
  }

  outline({ question, notes, settings, feedback, previous }: Parameters<Analyst['outline']>[0]) {
    const revision = feedback && previous ? `\n\nRevise this outline:\n${JSON.stringify(previous)}\n\nThe user's feedback: ${feedback}` : '';
    const prompt = `Outline a report that answers the question from these notes. Reply with JSON only: {"title": "...", "sections": [{"title": "...", "focus": "one sentence", "noteIds": ["ids of the notes the section uses"]}]}.${revision}\n\nQuestion: ${question}\n\nNotes (id in brackets):\n${notesForPrompt(notes)}`;
    return this.structured(this.main, systemPrompt(settings, 'You structure reports.'), prompt, outlineSchema, (value): Outline => ({
      title: value.title,
      sections: value.sections.map((section) => ({ ...section, noteIds: section.noteIds.filter((id) => notes.some((note) => note.id === id)) })),
    }));
  }

  writeSection({ question, section, notes, citationFor, settings, onDelta }: Parameters<Analyst['writeSection']>[0]): AnalystCall<string> {
    const words = Math.round(reportWords[settings.reportLength] / 3);
    const system = systemPrompt(settings, 'You write one section of a cited report. Every factual sentence ends with the [n] number of the source it comes from; use only the numbers given.');
    const prompt = `Write the section "${section.title}" (${section.focus}) of a report on: ${question}\nAbout ${words} words of Markdown prose, no heading.\n\nNotes with their source numbers:\n${notesForPrompt(notes, citationFor)}`;
    return {
      model: this.main.id,
      system,
      prompt,
      run: async (signal) => {
        const { streamText } = await import('ai');
        const result = streamText({ model: await this.main.load(), system, prompt, abortSignal: signal, maxRetries: 2 });
        let text = '';
        for await (const delta of result.textStream) {
          text += delta;
          onDelta?.(delta);
        }
        return { output: text.trim(), usage: this.usage(this.main, await result.usage) };
      },
    };
  }

  assessFollowUp({ question, notes, conversation, settings }: Parameters<Analyst['assessFollowUp']>[0]) {
    const prompt = `A user asks a follow-up on a finished research session. Decide whether the notes already answer it. Reply with JSON only: {"action": "answer" | "research", "reason": "..."}.\n\nConversation:\n${conversation}\n\nFollow-up: ${question}\n\nNotes:\n${notesForPrompt(notes)}`;
    return this.structured(this.fast, systemPrompt(settings, 'You decide whether more research is needed.'), prompt, assessmentSchema, (value) => value);
  }

  answer({ question, notes, conversation, citationFor, settings }: Parameters<Analyst['answer']>[0]) {
    const prompt = `Answer the follow-up from the notes, citing sources as [n].\n\nConversation:\n${conversation}\n\nFollow-up: ${question}\n\nNotes with their source numbers:\n${notesForPrompt(notes, citationFor)}`;
    return this.text(this.main, systemPrompt(settings, 'You answer follow-up questions with citations.'), prompt, (text) => text.trim());
  }

  private usage(model: ConfiguredModel, usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined): TokenUsage {
    const inputTokens = usage?.inputTokens ?? 0;
    const outputTokens = usage?.outputTokens ?? 0;
    const costUsd = model.price ? (inputTokens * model.price.inputPerMillion + outputTokens * model.price.outputPerMillion) / 1_000_000 : 0;
    return { inputTokens, outputTokens, totalTokens: usage?.totalTokens ?? inputTokens + outputTokens, costUsd };
  }

  private text<T>(model: ConfiguredModel, system: string, prompt: string, read: (text: string) => T): AnalystCall<T> {
    return {
      model: model.id,
      system,
      prompt,
      run: async (signal) => {
        const { generateText } = await import('ai');
        const result = await generateText({ model: await model.load(), system, prompt, abortSignal: signal, maxRetries: 2 });
        return { output: read(result.text), usage: this.usage(model, result.usage) };
      },
    };
  }

  /**
   * A call whose reply must be JSON matching `schema`; an invalid reply is retried with the error
   * shown to the model, then reported as a clear failure of the step.
   */
  private structured<S extends z.ZodType, T>(model: ConfiguredModel, system: string, prompt: string, schema: S, read: (value: z.infer<S>) => T): AnalystCall<T> {
    return {
      model: model.id,
      system,
      prompt,
      run: async (signal) => {
        const total: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 };
        let messages: { role: 'user' | 'assistant'; content: string }[] = [{ role: 'user', content: prompt }];
        let lastError = '';
        const { generateText } = await import('ai');
        for (let attempt = 1; attempt <= STRUCTURED_ATTEMPTS; attempt++) {
          const result = await generateText({ model: await model.load(), system, messages, abortSignal: signal, maxRetries: 2 });
          const usage = this.usage(model, result.usage);
          for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd'] as const) total[key] = (total[key] ?? 0) + (usage[key] ?? 0);
          try {
            const parsed = schema.safeParse(extractJson(result.text));
            if (parsed.success) return { output: read(parsed.data), usage: total };
            lastError = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'reply'}: ${issue.message}`).join('; ');
          } catch (error) {
            lastError = `not JSON (${(error as Error).message})`;
          }
          messages = [...messages, { role: 'assistant', content: result.text }, { role: 'user', content: `That reply was invalid: ${lastError}. Reply again with JSON only, in exactly the requested shape.` }];
        }
        throw new QuarryError('STEP_FAILED', `The model ${model.id} gave no valid structured reply in ${STRUCTURED_ATTEMPTS} attempts: ${lastError}`, { details: { model: model.id } });
      },
    };
  }
}
