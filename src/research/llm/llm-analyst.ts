import { z } from 'zod';
import type { ConfiguredModel } from '../../providers/llm/create-language-model.ts';
import { inModelCall, modelTelemetry } from '../../shared/tracing.ts';
import type { Analyst, AnalystCall, ClaimJudgment } from '../analyst.ts';
import { MAX_CLARIFYING_QUESTIONS } from '../clarify.ts';
import { type ResearchSettings, reportWords } from '../research-settings.ts';
import type { Note, Outline, ResearchState } from '../research-types.ts';
import { asModelError } from './model-error.ts';
import { structuredCall, structuredPrompt, usageOf } from './structured-call.ts';

/**
 * Schemas of the structured replies. No length limits: strict JSON-schema modes reject some of
 * those keywords, so lengths are enforced after parsing instead.
 */
const planSchema = z.object({ queries: z.array(z.string()) });
const notesSchema = z.object({
  notes: z.array(
    z.object({
      quote: z.string().describe('one or two sentences copied exactly, character for character, from the source'),
      note: z.string().describe('what the quote tells us about the question, in one sentence'),
    }),
  ),
});
const analysisSchema = z.object({
  done: z.boolean(),
  reason: z.string(),
  covered: z.array(z.string()).describe('aspects of the question the notes answer'),
  open: z.array(z.string()).describe('aspects still unanswered'),
  nextQueries: z.array(z.string()),
});
function outlineSchema(noteIds: string[]) {
  // With few enough notes the ids are an enum, so a provider that enforces schemas cannot invent one;
  // an id a model invents anyway becomes '' (dropped, and the section is grounded by ranking).
  const id =
    noteIds.length > 0 && noteIds.length <= 300 ? z.enum(noteIds as [string, ...string[]]).catch('') : z.string();
  return z.object({
    title: z.string(),
    sections: z.array(z.object({ title: z.string(), focus: z.string(), noteIds: z.array(id) })),
  });
}
const clarifySchema = z.object({
  needed: z
    .boolean()
    .describe('true only when the question is ambiguous enough that answers would change the research'),
  questions: z.array(z.string()).describe('at most 3 short questions for the person, none when not needed'),
});
const assessmentSchema = z.object({ action: z.enum(['answer', 'research']), reason: z.string() });
const judgmentSchema = z.object({
  judgments: z.array(
    z.object({
      claim: z.number().int().describe('the number of the claim judged'),
      supported: z.boolean().describe('true only when the passages state what the claim says'),
      reason: z.string(),
    }),
  ),
});

/** Longest source text a note-taking call sees, in characters. */
const SOURCE_CHARS = 12_000;
/** Longest passage per claim an entailment check sees. */
const PASSAGE_CHARS = 700;

function systemPrompt(settings: ResearchSettings, role: string): string {
  const parts = [`You are a careful research analyst. ${role}`, `Write in ${settings.language}.`];
  if (settings.systemInstruction)
    parts.push(`Instructions from the user, which shape everything you write: ${settings.systemInstruction}`);
  return parts.join('\n');
}

function notesForPrompt(notes: readonly Note[], citationFor?: Record<string, number>): string {
  return notes
    .map((note) => {
      const label = citationFor ? citationFor[note.url] : note.id;
      const quote = note.quote && note.quote !== note.text ? ` — quote: "${note.quote}"` : '';
      return `- [${label}] ${note.text}${quote} (source: ${note.title})`;
    })
    .join('\n');
}

/** What the research knows so far, for prompts that plan or write. */
function stateForPrompt(state: ResearchState | undefined): string {
  if (!state) return '';
  const parts: string[] = [];
  if (state.findings) parts.push(`Findings so far: ${state.findings}`);
  if (state.aspects.covered.length) parts.push(`Aspects covered: ${state.aspects.covered.join('; ')}`);
  if (state.aspects.open.length) parts.push(`Aspects still open: ${state.aspects.open.join('; ')}`);
  if (state.topics.done.length) parts.push(`Searches already done: ${state.topics.done.join('; ')}`);
  if (state.topics.irrelevant.length)
    parts.push(`Searches that found nothing relevant: ${state.topics.irrelevant.join('; ')}`);
  if (state.preferences.length) parts.push(`The user asked for: ${state.preferences.join('; ')}`);
  return parts.length ? `${parts.join('\n')}\n\n` : '';
}

function clean(values: string[], limit: number): string[] {
  return [...new Set(values.map((value) => value.trim()).filter(Boolean))].slice(0, limit);
}

/**
 * Reasoning through a language model (any AI SDK provider). Structured replies use the provider's
 * JSON-schema mode where it has one and are validated with zod; notes carry the exact quote they
 * rest on, which the workflow checks against the source before any of it may be cited.
 */
/** What every prose call sends: the model, its prompts, its temperature, and no retries of the SDK's own. */
async function callOptions(model: ConfiguredModel, system: string, prompt: string, signal: AbortSignal) {
  return {
    model: await model.load(),
    system,
    prompt,
    abortSignal: signal,
    // The SDK retries nothing itself: every try is a journaled step retry that clients see (issue 45).
    maxRetries: 0,
    ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
    experimental_telemetry: modelTelemetry('quarry.prose'),
  };
}

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
    return this.text(
      this.fast,
      systemPrompt(settings, 'You name research sessions.'),
      `Give a short title (at most 8 words) for this research question. Reply with the title only, no quotes.\n\nQuestion: ${question}`,
      (text) =>
        text
          .trim()
          .replace(/^["']|["']$/g, '')
          .slice(0, 120),
    );
  }

  clarify({ question, settings }: Parameters<Analyst['clarify']>[0]) {
    const prompt = `Before researching this question, decide whether it is ambiguous: whether its scope, audience, time frame or meaning is unclear in a way that would change what to research. If it is, ask at most ${MAX_CLARIFYING_QUESTIONS} short questions; if it is clear enough, ask none.\n\nQuestion: ${question}`;
    return this.structured(
      this.fast,
      systemPrompt(settings, 'You decide whether a research question needs clarifying.'),
      prompt,
      clarifySchema,
      'clarify',
      (value) => ({ questions: value.needed ? clean(value.questions, MAX_CLARIFYING_QUESTIONS) : [] }),
    );
  }

  plan({ question, settings, context, state }: Parameters<Analyst['plan']>[0]) {
    const prompt = `Plan the research for this question: give ${settings.queriesPerIteration} search queries, most important first, each a few keywords a search engine would match.\n\n${stateForPrompt(state)}${context ? `Conversation so far:\n${context}\n\n` : ''}Question: ${question}`;
    return this.structured(
      this.main,
      systemPrompt(settings, 'You plan searches.'),
      prompt,
      planSchema,
      'plan',
      (value) => {
        const queries = clean(value.queries, settings.queriesPerIteration);
        return { queries: queries.length ? queries : [question] };
      },
    );
  }

  takeNotes({ question, source, iteration, idPrefix, settings }: Parameters<Analyst['takeNotes']>[0]) {
    const prompt = `Take notes from this source for the question: at most 4 notes, none when the source does not help answer it. Each note has a quote copied exactly from the source (one or two sentences) and what it tells us.\n\nQuestion: ${question}\n\nSource: ${source.title} (${source.url})\n\n${source.text.slice(0, SOURCE_CHARS)}`;
    return this.structured(
      this.fast,
      systemPrompt(settings, 'You extract facts with their exact quotes.'),
      prompt,
      notesSchema,
      'notes',
      (value) =>
        value.notes
          .filter((item) => item.note.trim())
          .slice(0, 4)
          .map(
            (item, index): Note => ({
              id: `${idPrefix}-${index}`,
              url: source.url,
              title: source.title,
              text: item.note.trim(),
              // Checked against the source by the workflow; an unverified quote is never cited.
              quote: item.quote.trim(),
              query: source.query,
              iteration,
              ...(source.relevance !== undefined ? { score: source.relevance } : {}),
            }),
          ),
    );
  }

  analyze({ question, notes, iteration, asked, settings, findings }: Parameters<Analyst['analyze']>[0]) {
    const prompt = `Judge whether these notes answer the question: which aspects of it they cover, which remain open, and — unless done — new searches for the open aspects (never one already asked). This was iteration ${iteration} of at most ${settings.maxIterations}.\n\nQuestion: ${question}\n\n${findings ? `Findings so far: ${findings}\n\n` : ''}Asked: ${asked.join('; ')}\n\nNotes:\n${notesForPrompt(notes)}`;
    return this.structured(
      this.main,
      systemPrompt(settings, 'You judge coverage and find gaps.'),
      prompt,
      analysisSchema,
      'analysis',
      (value) => ({
        done: value.done,
        reason: value.reason,
        covered: clean(value.covered, 12),
        open: clean(value.open, 12),
        nextQueries: clean(value.nextQueries, settings.queriesPerIteration),
      }),
    );
  }

  summarize({ question, notes, iteration, settings }: Parameters<Analyst['summarize']>[0]) {
    const prompt = `In at most five sentences, say what these notes establish about the question so far and what is still missing. No citations.\n\nQuestion: ${question}\n\nNotes after iteration ${iteration}:\n${notesForPrompt(notes)}`;
    return this.text(this.fast, systemPrompt(settings, 'You summarize research findings.'), prompt, (text) =>
      text.trim().slice(0, 2000),
    );
  }

  outline({ question, notes, settings, feedback, previous, state }: Parameters<Analyst['outline']>[0]) {
    const revision =
      feedback && previous
        ? `\n\nRevise this outline:\n${JSON.stringify({ title: previous.title, sections: previous.sections })}\n\nThe user's feedback: ${feedback}`
        : '';
    const prompt = `Outline a report that answers the question from these notes: a title, and sections each with a one-sentence focus and the ids of the notes it is written from (every section needs notes; leave out what no note supports).${revision}\n\n${stateForPrompt(state)}Question: ${question}\n\nNotes (id in brackets):\n${notesForPrompt(notes)}`;
    const ids = notes.map((note) => note.id);
    return this.structured(
      this.main,
      systemPrompt(settings, 'You structure reports.'),
      prompt,
      outlineSchema(ids),
      'outline',
      (value): Outline => ({
        title: value.title.trim() || previous?.title || question.slice(0, 120),
        sections: value.sections
          .filter((section) => section.title.trim())
          .map((section) => ({ title: section.title.trim(), focus: section.focus.trim(), noteIds: section.noteIds })),
        ...(feedback ? { feedback: { applied: [feedback], notUnderstood: [] } } : {}),
      }),
    );
  }

  writeSection({
    question,
    section,
    notes,
    citationFor,
    settings,
    findings,
    onDelta,
  }: Parameters<Analyst['writeSection']>[0]): AnalystCall<string> {
    const words = Math.round(reportWords[settings.reportLength] / 3);
    const system = systemPrompt(
      settings,
      'You write one section of a cited report. Every factual sentence ends with the [n] number of the source it comes from; use only the numbers given, and state nothing the notes do not support.',
    );
    const prompt = `Write the section "${section.title}" (${section.focus}) of a report on: ${question}\nAbout ${words} words of Markdown prose, no heading.\n\n${findings ? `What the research found overall: ${findings}\n\n` : ''}Notes with their source numbers:\n${notesForPrompt(notes, citationFor)}`;
    return {
      model: this.main.id,
      system,
      prompt,
      run: (signal) => this.streamed(this.main, system, prompt, signal, onDelta),
    };
  }

  judgeClaims({ question, claims, settings }: Parameters<Analyst['judgeClaims']>[0]) {
    // Claims are numbered 1, 2, 3… in the prompt (their own indexes are the report's business).
    const listed = claims
      .map(
        (claim, position) =>
          `Claim ${position + 1}: ${claim.claim}\n${claim.passages.map((passage) => `  Passage: ${passage.slice(0, PASSAGE_CHARS)}`).join('\n')}`,
      )
      .join('\n\n');
    const prompt = `These claims come from a report on: ${question}\nFor each claim, judge whether its passages state what it says (supported) or not. Judge from the passages only, not from what you know.\n\n${listed}`;
    return this.structured(
      this.fast,
      systemPrompt(settings, 'You check claims against their sources.'),
      prompt,
      judgmentSchema,
      'judgments',
      (value): ClaimJudgment[] =>
        value.judgments
          .filter((judgment) => judgment.claim >= 1 && judgment.claim <= claims.length)
          .map((judgment) => ({
            index: claims[judgment.claim - 1]!.index,
            supported: judgment.supported,
            reason: judgment.reason.trim(),
          })),
    );
  }

  assessFollowUp({ question, notes, conversation, settings }: Parameters<Analyst['assessFollowUp']>[0]) {
    const prompt = `A user asks a follow-up on a finished research session. Decide whether the notes already answer it ("answer") or more research is needed ("research").\n\nConversation:\n${conversation}\n\nFollow-up: ${question}\n\nNotes:\n${notesForPrompt(notes)}`;
    return this.structured(
      this.fast,
      systemPrompt(settings, 'You decide whether more research is needed.'),
      prompt,
      assessmentSchema,
      'assessment',
      (value) => value,
    );
  }

  answer({ question, notes, conversation, citationFor, settings, onDelta }: Parameters<Analyst['answer']>[0]) {
    const prompt = `Answer the follow-up from the notes. Every factual sentence ends with the [n] number of its source; use only the numbers given.\n\nConversation:\n${conversation}\n\nFollow-up: ${question}\n\nNotes with their source numbers:\n${notesForPrompt(notes, citationFor)}`;
    const system = systemPrompt(settings, 'You answer follow-up questions with citations.');
    return {
      model: this.main.id,
      system,
      prompt,
      run: (signal: AbortSignal) => this.streamed(this.main, system, prompt, signal, onDelta),
    };
  }

  /** Prose streamed from the model: each piece to `onDelta` as it arrives, the whole text trimmed. */
  private async streamed(
    model: ConfiguredModel,
    system: string,
    prompt: string,
    signal: AbortSignal,
    onDelta?: (text: string) => void,
  ) {
    const { streamText } = await import('ai');
    return inModelCall(model.id, async () => {
      const result = streamText(await callOptions(model, system, prompt, signal));
      let text = '';
      // The full stream, not the text stream: that one leaves errors out, and a failed call would read as empty text.
      for await (const part of result.fullStream) {
        if (part.type === 'error') throw asModelError(part.error, model.id);
        if (part.type === 'abort') throw signal.reason ?? new Error('the model call was aborted');
        if (part.type !== 'text-delta') continue;
        text += part.text;
        onDelta?.(part.text);
      }
      return { output: text.trim(), usage: usageOf(model, await result.usage) };
    });
  }

  private text<T>(model: ConfiguredModel, system: string, prompt: string, read: (text: string) => T): AnalystCall<T> {
    return {
      model: model.id,
      system,
      prompt,
      run: async (signal) => {
        const { generateText } = await import('ai');
        return inModelCall(model.id, async () => {
          const result = await generateText(await callOptions(model, system, prompt, signal)).catch(
            (error: unknown) => {
              throw asModelError(error, model.id);
            },
          );
          return { output: read(result.text), usage: usageOf(model, result.usage) };
        });
      },
    };
  }

  private structured<S extends z.ZodType, T>(
    model: ConfiguredModel,
    system: string,
    prompt: string,
    schema: S,
    name: string,
    read: (value: z.infer<S>) => T,
  ): AnalystCall<T> {
    const sent = structuredPrompt(model, prompt, schema);
    return {
      model: model.id,
      system,
      prompt: sent,
      run: async (signal) => {
        const { output, usage } = await inModelCall(model.id, () =>
          structuredCall({ model, system, prompt: sent, schema, name, signal }),
        );
        return { output: read(output), usage };
      },
    };
  }
}
