import type { RunContext } from '../engine/run-context.ts';
import type { Workflow } from '../engine/workflow.ts';
import type { FetchedPage } from '../providers/fetch/fetch-page.ts';
import type { SearchProvider, SearchResult } from '../providers/search/search-provider.ts';
import type { Store } from '../store/store.ts';
import type { Analyst, AnalystCall, TokenUsage } from './analyst.ts';
import { assignCitations, renderSources, renumberCitations } from './citations.ts';
import { runFollowUp } from './follow-up.ts';
import { isApproval } from './outline-review.ts';
import { parseResearchSettings, type ResearchSettings } from './research-settings.ts';
import type { CitedSource, Note, Outline, ResearchOutput, SourceText } from './research-types.ts';
import { markFlagged, verifyClaims } from './verify-claims.ts';

export const RESEARCH_WORKFLOW_NAME = 'research';
export const RESEARCH_WORKFLOW_VERSION = 1;

export interface ResearchRunInput {
  question: string;
  mode?: 'initial' | 'follow-up';
}

export interface ResearchDependencies {
  store: Store;
  analystFor(settings: ResearchSettings): Analyst;
  searchProvidersFor(settings: ResearchSettings): SearchProvider[];
  fetchPage(url: string, signal: AbortSignal): Promise<FetchedPage>;
}

/** The title a session gets before its analyst names it: the trimmed question. */
export function defaultTitle(question: string): string {
  const clean = question.trim().replace(/\s+/g, ' ');
  return clean.length <= 120 ? clean : `${clean.slice(0, 119)}…`;
}

/** Token and cost ledger of one run, rebuilt on replay from the recorded usage. */
export class Ledger {
  inputTokens = 0;
  outputTokens = 0;
  costUsd = 0;
  add(usage: TokenUsage | undefined): void {
    this.inputTokens += usage?.inputTokens ?? 0;
    this.outputTokens += usage?.outputTokens ?? 0;
    this.costUsd += usage?.costUsd ?? 0;
  }
  exceeded(settings: ResearchSettings): boolean {
    if (settings.tokenBudget !== undefined && this.inputTokens + this.outputTokens >= settings.tokenBudget) return true;
    return settings.costBudgetUsd !== undefined && this.costUsd >= settings.costBudgetUsd;
  }
  toJSON() {
    return { inputTokens: this.inputTokens, outputTokens: this.outputTokens, costUsd: Number(this.costUsd.toFixed(6)) };
  }
}

/**
 * Runs an analyst call as a journaled step: an `llm` step (prompt, usage) for model calls, a plain
 * step otherwise. The recorded output carries the usage, so the ledger is the same on replay.
 */
export async function think<T>(ctx: RunContext, ledger: Ledger, options: { key: string; phase: string }, call: AnalystCall<T>): Promise<T> {
  const recorded = call.model
    ? await ctx.llm({ key: options.key, phase: options.phase, model: call.model, system: call.system, prompt: call.prompt ?? '' }, async (signal) => {
        const result = await call.run(signal);
        return { output: { value: result.output, usage: result.usage ?? null }, usage: result.usage };
      })
    : await ctx.step({ key: options.key, phase: options.phase }, async (signal) => ({ value: (await call.run(signal)).output, usage: null }));
  ledger.add(recorded.usage ?? undefined);
  return recorded.value;
}

/** Searches every provider; a provider that fails is reported, the others' results kept (interleaved). */
async function searchAll(providers: SearchProvider[], query: string, maxResults: number, signal: AbortSignal): Promise<{ results: SearchResult[]; errors: string[] }> {
  const settled = await Promise.allSettled(providers.map((provider) => provider.search(query, { maxResults, signal })));
  const lists = settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
  const errors = settled.flatMap((outcome, index) => (outcome.status === 'rejected' ? [`${providers[index]!.name}: ${(outcome.reason as Error).message}`] : []));
  if (errors.length === providers.length && providers.length > 0) throw new Error(`every search provider failed: ${errors.join('; ')}`);
  const results: SearchResult[] = [];
  for (let index = 0; results.length < maxResults * providers.length && lists.some((list) => index < list.length); index++) {
    for (const list of lists) if (list[index]) results.push(list[index]!);
  }
  return { results, errors };
}

/** Text of a search result: the local passage as it is, a web page fetched and extracted. */
async function readSource(deps: ResearchDependencies, result: SearchResult, query: string, signal: AbortSignal): Promise<SourceText> {
  const offset = Number((result.metadata as { start?: number } | undefined)?.start ?? 0);
  if (result.content) return { url: result.url, title: result.title, text: result.content, offset, query, provider: result.provider, fetched: true };
  try {
    const page = await deps.fetchPage(result.url, signal);
    return { url: result.url, title: page.document.title || result.title, text: page.document.text.slice(0, 60_000), offset: 0, query, provider: result.provider, fetched: true };
  } catch (error) {
    if (signal.aborted) throw error;
    // An unreadable page still has its search snippet; the reason is kept with the source.
    return { url: result.url, title: result.title, text: result.snippet, offset: 0, query, provider: result.provider, fetched: false, error: (error as Error).message };
  }
}

/**
 * The results an iteration reads: in search order, new ones only (a local document is visited
 * passage by passage, a web page once), at most `sourcesPerQuery` per query asked.
 */
export function chooseSources(searches: { results: SearchResult[] }[], queries: string[], alreadyVisited: string[], settings: ResearchSettings) {
  const visited = new Set(alreadyVisited);
  const chosen: { result: SearchResult; query: string }[] = [];
  searches.forEach((search, index) => {
    for (const result of search.results) {
      const passage = (result.metadata as { passageId?: number } | undefined)?.passageId;
      const key = passage === undefined ? result.url.split('#')[0]! : `${result.url}#passage-${passage}`;
      if (visited.has(key) || chosen.length >= settings.sourcesPerQuery * queries.length) continue;
      visited.add(key);
      chosen.push({ result, query: queries[index]! });
    }
  });
  return { chosen, visited: [...visited] };
}

/** The queries an iteration asks: new ones only (case-insensitive), at most `queriesPerIteration`. */
export function freshQueries(queries: string[], asked: string[], settings: ResearchSettings): string[] {
  const seen = new Set(asked.map((query) => query.toLowerCase()));
  return [...new Set(queries.map((query) => query.trim()).filter((query) => query && !seen.has(query.toLowerCase())))].slice(0, settings.queriesPerIteration);
}

export interface ResearchState {
  notes: Note[];
  asked: string[];
  visited: string[];
}

/** Iterations of search → read → analyze until covered, out of iterations, or over budget. */
export async function researchLoop(ctx: RunContext, deps: ResearchDependencies, input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger; state: ResearchState; prefix: string; firstQueries: string[] }): Promise<void> {
  const { question, settings, analyst, ledger, state, prefix } = input;
  const providers = deps.searchProvidersFor(settings);
  let queries = input.firstQueries;
  for (let iteration = 1; iteration <= settings.maxIterations; iteration++) {
    const fresh = freshQueries(queries, state.asked, settings);
    if (fresh.length === 0) break;
    state.asked.push(...fresh);
    const base = `${prefix}iteration-${iteration}`;
    const searches = await Promise.all(
      fresh.map((query, index) => ctx.step({ key: `${base}/search-${index}`, phase: 'search', input: { query } }, (signal) => searchAll(providers, query, settings.sourcesPerQuery, signal))),
    );
    const { chosen, visited } = chooseSources(searches, fresh, state.visited, settings);
    state.visited = visited;
    const sources = await Promise.all(
      chosen.map(({ result, query }, index) =>
        ctx.step({ key: `${base}/read-${index}`, phase: 'read', input: { url: result.url } }, async (signal) => {
          const source = await readSource(deps, result, query, signal);
          await deps.store.upsertSource({ sessionId: ctx.sessionId, url: source.url, title: source.title, considered: 1, runId: ctx.runId, fence: ctx.fence, metadata: { provider: source.provider, fetched: source.fetched, error: source.error ?? null } });
          await ctx.emit('source-found', { url: source.url, title: source.title, fetched: source.fetched });
          return source;
        }),
      ),
    );
    const noteLists = await Promise.all(
      sources.map((source, index) => think(ctx, ledger, { key: `${base}/notes-${index}`, phase: 'read' }, analyst.takeNotes({ question, source, iteration, idPrefix: `r${ctx.runNumber}/${base}-${index}`, settings }))),
    );
    const newNotes = noteLists.flat();
    state.notes.push(...newNotes);
    const analysis = await think(ctx, ledger, { key: `${base}/analyze`, phase: 'analyze' }, analyst.analyze({ question, notes: state.notes, newNotes, iteration, asked: state.asked, settings }));
    if (analysis.done || ledger.exceeded(settings)) break;
    queries = analysis.nextQueries;
  }
}

/** Outline, optional review by a person, sections with one citation map, verification. */
export async function writeReport(ctx: RunContext, deps: ResearchDependencies, input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger; notes: Note[]; prefix: string }): Promise<{ report: string; citations: CitedSource[]; flagged: ResearchOutput['flagged'] }> {
  const { question, settings, analyst, ledger, notes, prefix } = input;
  let outline: Outline = await think(ctx, ledger, { key: `${prefix}outline`, phase: 'outline' }, analyst.outline({ question, notes, settings }));
  if (settings.reviewOutline) {
    for (let round = 1; round <= 5; round++) {
      const answer = await ctx.waitForInput<string>({ key: `${prefix}outline-review-${round}`, phase: 'outline', payload: { outline } });
      if (isApproval(answer)) break;
      outline = await think(ctx, ledger, { key: `${prefix}outline-revision-${round}`, phase: 'outline' }, analyst.outline({ question, notes, settings, feedback: String(answer), previous: outline }));
    }
  }
  const notesById = new Map(notes.map((note) => [note.id, note]));
  const numbers = assignCitations(outline, notesById);
  const citationFor = Object.fromEntries(numbers);
  const drafts: { title: string; text: string }[] = [];
  for (const [index, section] of outline.sections.entries()) {
    const sectionNotes = section.noteIds.map((id) => notesById.get(id)).filter((note): note is Note => note !== undefined);
    const text = await think(
      ctx,
      ledger,
      { key: `${prefix}write/section-${index}`, phase: 'write' },
      analyst.writeSection({ question, section, notes: sectionNotes, citationFor, settings, onDelta: (delta) => void ctx.emit('report-delta', { section: index, title: section.title, text: delta }).catch(() => undefined) }),
    );
    drafts.push({ title: section.title, text });
  }
  const titles = new Map(notes.map((note) => [note.url, note.title]));
  const body = drafts.map((draft) => `## ${draft.title}\n\n${draft.text}\n`).join('\n');
  const { text, sources } = renumberCitations(body, numbers, titles);
  const label = analyst.usesModel ? `_Written by ${analyst.name}; every claim cites its source._` : '_Made without a language model: extractive summary of the sources, each sentence quoted with its citation._';
  return ctx.step({ key: `${prefix}verify`, phase: 'verify' }, async () => {
    const sections = text.split(/^## /m).filter(Boolean).map((part) => ({ title: part.split('\n', 1)[0]!, text: part }));
    const flagged = verifyClaims(sections, sources, notes);
    const report = markFlagged(`# ${outline.title}\n\n${label}\n\n${text}\n${renderSources(sources)}`, flagged);
    for (const source of sources) await deps.store.upsertSource({ sessionId: ctx.sessionId, url: source.url, citation: source.number, selected: 1, fence: ctx.fence });
    for (const claim of flagged) await ctx.emit('claim-flag', claim);
    // Idempotent: a retry of this step after a crash must not post the report twice.
    const posted = await deps.store.listMessages(ctx.sessionId, { runId: ctx.runId, phase: 'verify' });
    if (!posted.some((message) => message.role === 'assistant')) {
      await deps.store.appendMessage({ sessionId: ctx.sessionId, role: 'assistant', content: report, runId: ctx.runId, phase: 'verify', fence: ctx.fence });
    }
    return { report, citations: sources, flagged };
  });
}

/** The deep-research workflow: plan → (search → read → analyze)* → outline → write → verify. */
export function researchWorkflow(deps: ResearchDependencies): Workflow<ResearchRunInput, ResearchOutput> {
  return {
    name: RESEARCH_WORKFLOW_NAME,
    version: RESEARCH_WORKFLOW_VERSION,
    async run(ctx, input) {
      const settings = parseResearchSettings(ctx.settings);
      const analyst = deps.analystFor(settings);
      const ledger = new Ledger();
      if (input.mode === 'follow-up') return runFollowUp(ctx, deps, { question: input.question, settings, analyst, ledger });
      const title = await think(ctx, ledger, { key: 'title', phase: 'plan' }, analyst.title(input.question, settings));
      await ctx.step({ key: 'title/apply', phase: 'plan' }, async () => {
        const session = await deps.store.getSession(ctx.sessionId);
        // A title the user chose is never replaced.
        if (session.title === defaultTitle(input.question) && title.trim()) await deps.store.updateSession(ctx.sessionId, { title: title.trim().slice(0, 300) });
      });
      const plan = await think(ctx, ledger, { key: 'plan', phase: 'plan' }, analyst.plan({ question: input.question, settings }));
      const state: ResearchState = { notes: [], asked: [], visited: [] };
      await researchLoop(ctx, deps, { question: input.question, settings, analyst, ledger, state, prefix: '', firstQueries: plan.queries });
      const written = await writeReport(ctx, deps, { question: input.question, settings, analyst, ledger, notes: state.notes, prefix: '' });
      return { ...written, notes: state.notes, queries: state.asked, visited: state.visited, analyst: analyst.name, usage: ledger.toJSON() };
    },
  };
}
