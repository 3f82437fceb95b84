import { type SearchProvider, type SearchResult, shortenQuery } from '../providers/search/search-provider.ts';
import { mapConcurrent } from '../shared/concurrency.ts';
import { isQuarryError, isRetryable, QuarryError } from '../shared/errors.ts';
import { inSpan } from '../shared/tracing.ts';
import type { Analyst } from './analyst.ts';
import { type ChosenSource, chooseSources } from './choose-sources.ts';
import { citable, verifyNote } from './quotes.ts';
import type { ResearchContext } from './research-context.ts';
import type { ResearchDependencies } from './research-dependencies.ts';
import type { ResearchSettings } from './research-settings.ts';
import { addTopics, applyAnalysis } from './research-state.ts';
import type { Note, ResearchState, SourceText } from './research-types.ts';
import { type KeyScope, stepKeys } from './step-keys.ts';
import type { ResearchStepOutputs } from './step-outputs.ts';
import { type Ledger, think } from './think.ts';

/** Searches and reads of one iteration in flight at once (each is still its own journaled step). */
export const RESEARCH_CONCURRENCY = 4;
/**
 * Results asked of each search per source read: the analyst chooses among four times as many as it
 * reads (local results carry only their passage; their text is read once chosen).
 */
const CANDIDATES_PER_SOURCE = 4;
/** Longest text kept of a fetched web page, in characters. */
const PAGE_CHARS = 60_000;

/** What research has gathered so far in a run: notes, queries asked, passages visited, and its state. */
export interface Gathered {
  notes: Note[];
  asked: string[];
  visited: string[];
  state: ResearchState;
}

/** A URL's host, for a span (never its path or query: they may carry what a user searched for). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** Searches every provider; a provider that fails is reported, the others' results kept (interleaved). */
async function searchAll(
  providers: SearchProvider[],
  query: string,
  maxResults: number,
  signal: AbortSignal,
): Promise<{ results: SearchResult[]; errors: string[] }> {
  const settled = await Promise.allSettled(
    providers.map((provider) =>
      inSpan('quarry.search', { 'quarry.search.provider': provider.name }, async (span) => {
        const results = await provider.search(shortenQuery(query, provider.maxQueryChars), { maxResults, signal });
        span.setAttribute('quarry.search.results', results.length);
        return results;
      }),
    ),
  );
  const lists = settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
  const errors = settled.flatMap((outcome, index) =>
    outcome.status === 'rejected' ? [`${providers[index]!.name}: ${(outcome.reason as Error).message}`] : [],
  );
  if (errors.length === providers.length && providers.length > 0) {
    const reasons = settled.map((outcome) => (outcome as PromiseRejectedResult).reason);
    // A passing outage (a restarting store, a provider's 429) is worth another try of the step.
    const retryable = reasons.find(isRetryable);
    throw new QuarryError('STEP_FAILED', `every search provider failed: ${errors.join('; ')}`, {
      isRetryable: retryable !== undefined,
      retryAfterMs: retryable?.retryAfterMs,
      cause: retryable,
    });
  }
  const results: SearchResult[] = [];
  for (
    let index = 0;
    results.length < maxResults * providers.length && lists.some((list) => index < list.length);
    index++
  ) {
    for (const list of lists) if (list[index]) results.push(list[index]!);
  }
  return { results, errors };
}

/**
 * Tokens of a source's text: counted as the o200k family of models count them when a model reads
 * it, else estimated at four characters a token (the tokenizer's tables take a fifth of a second to
 * load, a fifth of an offline run, for a figure nothing then spends).
 */
async function countTokens(text: string, exact: boolean): Promise<number> {
  if (!exact) return Math.ceil(text.length / 4);
  const { countTokens: count } = await import('gpt-tokenizer');
  return count(text);
}

/**
 * Text of a search result: what its provider reads of it (a local passage in its section), the
 * content the search returned, or the web page fetched and extracted.
 */
async function readSource(
  deps: ResearchDependencies,
  providers: SearchProvider[],
  chosen: ChosenSource,
  signal: AbortSignal,
): Promise<SourceText> {
  const { result, query, relevance } = chosen;
  const metadata = (result.metadata ?? {}) as { start?: number; headings?: string };
  const known = {
    query,
    provider: result.provider,
    relevance,
    ...(chosen.lead !== undefined ? { lead: chosen.lead } : {}),
    ...(metadata.headings ? { headings: metadata.headings } : {}),
  };
  const provider = providers.find((each) => each.name === result.provider);
  if (provider?.read) {
    let read: Awaited<ReturnType<NonNullable<SearchProvider['read']>>>;
    try {
      read = await provider.read(result, signal);
    } catch (error) {
      // A result this provider may not read (one a journal from elsewhere names) is kept as found.
      if (!isQuarryError(error) || error.code !== 'FORBIDDEN') throw error;
      return { ...unreadable(result, query, error.message), text: '' };
    }
    const { text, segments } = read;
    const offset = Number(segments?.[0]?.start ?? metadata.start ?? 0);
    return {
      url: result.url,
      title: result.title,
      text,
      offset,
      fetched: true,
      ...known,
      ...(segments ? { segments } : {}),
    };
  }
  if (result.content)
    return { url: result.url, title: result.title, text: result.content, offset: 0, fetched: true, ...known };
  try {
    const page = await inSpan('quarry.fetch', { 'server.address': hostOf(result.url) }, async (span) => {
      const fetched = await deps.fetchPage(result.url, signal);
      span.setAttributes({ 'http.response.status_code': fetched.status, 'quarry.fetch.bytes': fetched.bytes });
      return fetched;
    });
    return {
      url: result.url,
      title: page.document.title || result.title,
      text: page.document.text.slice(0, PAGE_CHARS),
      offset: 0,
      fetched: true,
      ...known,
    };
  } catch (error) {
    if (signal.aborted) throw error;
    // An unreadable page still has its search snippet; the reason is kept with the source.
    return unreadable(result, query, (error as Error).message);
  }
}

function unreadable(result: SearchResult, query: string, error: string): SourceText {
  return {
    url: result.url,
    title: result.title,
    text: result.snippet,
    offset: 0,
    query,
    provider: result.provider,
    fetched: false,
    error,
  };
}

/** The queries an iteration asks: new ones only (case-insensitive), at most `queriesPerIteration`. */
export function freshQueries(queries: string[], asked: string[], settings: ResearchSettings): string[] {
  const seen = new Set(asked.map((query) => query.toLowerCase()));
  return [
    ...new Set(queries.map((query) => query.trim()).filter((query) => query && !seen.has(query.toLowerCase()))),
  ].slice(0, settings.queriesPerIteration);
}

/**
 * Reads one chosen source and takes notes from it: two journaled steps. Each note's quote is
 * checked against the text read before the notes are recorded.
 */
async function readAndTakeNotes(
  ctx: ResearchContext,
  deps: ResearchDependencies,
  input: {
    question: string;
    settings: ResearchSettings;
    analyst: Analyst;
    ledger: Ledger;
    iteration: number;
    providers: SearchProvider[];
  },
  choice: ChosenSource,
  key: { scope: KeyScope; iteration: number; index: number },
): Promise<{ source: SourceText; notes: Note[] }> {
  const { scope, iteration, index } = key;
  const source = await ctx.step<ResearchStepOutputs['read']>(
    { key: stepKeys.read(scope, iteration, index), phase: 'read', input: { url: choice.result.url } },
    async (signal) => {
      const read = await readSource(deps, input.providers, choice, signal);
      const withTokens = { ...read, tokens: await countTokens(read.text, input.analyst.usesModel) };
      await ctx.session.upsertSource({
        url: read.url,
        title: read.title,
        considered: 1,
        metadata: { provider: read.provider, fetched: read.fetched, error: read.error ?? null },
      });
      await ctx.emit('source-found', { url: read.url, title: read.title, fetched: read.fetched, query: read.query });
      return withTokens;
    },
  );
  const notes = await think<ResearchStepOutputs['notes']['value']>(
    ctx,
    input.ledger,
    {
      key: stepKeys.notes(scope, iteration, index),
      phase: 'read',
      finish: async (taken) => {
        const checked = taken.map((note) => verifyNote(note, source));
        const unverified = checked.filter((note) => note.verified === false).length;
        await ctx.emit('notes-take', { url: source.url, title: source.title, count: checked.length, unverified });
        return checked;
      },
    },
    input.analyst.takeNotes({
      question: input.question,
      source,
      iteration: input.iteration,
      idPrefix: `r${ctx.runNumber}/${scope}iteration-${iteration}-${index}`,
      settings: input.settings,
    }),
  );
  return { source, notes };
}

/** Least time between two `index-progress` events of a run. */
const PROGRESS_INTERVAL_MS = 500;

/**
 * Waits until the session's folders are indexed, announcing progress now and then (not a step:
 * nothing is recorded, and once the index is ready it returns at once).
 */
async function waitForDocuments(ctx: ResearchContext, deps: ResearchDependencies, settings: ResearchSettings) {
  if (!deps.documentsReady || settings.docs.length === 0) return;
  let last = 0;
  await deps.documentsReady(settings.docs, ctx.signal, (progress) => {
    const now = Date.now();
    if (now - last < PROGRESS_INTERVAL_MS && progress.done < progress.total) return;
    last = now;
    void ctx.emit('index-progress', progress).catch(() => undefined);
  });
}

/**
 * Iterations of search → read → summarize → analyze until covered, out of iterations, or over
 * budget. The searches of an iteration run in parallel, then its sources are read and noted in
 * parallel (bounded), each its own journaled step; the findings summary and the analysis update
 * the research state the next plan and the writer use.
 */
export async function researchLoop(
  ctx: ResearchContext,
  deps: ResearchDependencies,
  input: {
    question: string;
    settings: ResearchSettings;
    analyst: Analyst;
    ledger: Ledger;
    gathered: Gathered;
    scope: KeyScope;
    firstQueries: string[];
    /** The first iteration this run does (after iterations carried over from elsewhere). Default 1. */
    firstIteration?: number;
  },
): Promise<void> {
  const { question, settings, analyst, ledger, gathered, scope } = input;
  const providers = deps.searchProvidersFor(settings);
  await waitForDocuments(ctx, deps, settings);
  let queries = input.firstQueries;
  for (let iteration = input.firstIteration ?? 1; iteration <= settings.maxIterations; iteration++) {
    const fresh = freshQueries(queries, gathered.asked, settings);
    if (fresh.length === 0) break;
    gathered.asked.push(...fresh);
    const searches = await mapConcurrent(fresh, RESEARCH_CONCURRENCY, (query, index) =>
      ctx.step({ key: stepKeys.search(scope, iteration, index), phase: 'search', input: { query } }, (signal) =>
        searchAll(providers, query, settings.sourcesPerQuery * CANDIDATES_PER_SOURCE, signal),
      ),
    );
    // Read in each search's own order: a re-ranking by title and heading words (it lifted pages that
    // merely name a question's word) showed no gain on every labeled corpus, so none is done.
    const { chosen, visited } = chooseSources(searches, fresh, gathered.visited, settings, {
      first: iteration === 1,
    });
    gathered.visited = visited;
    const read = await mapConcurrent(chosen, RESEARCH_CONCURRENCY, (choice, index) =>
      readAndTakeNotes(ctx, deps, { question, settings, analyst, ledger, iteration, providers }, choice, {
        scope,
        iteration,
        index,
      }),
    );
    const newNotes = read.flatMap((each) => each.notes);
    gathered.state.tokensEstimated = !analyst.usesModel;
    gathered.notes.push(...newNotes);
    for (const { source } of read)
      gathered.state.tokensPerSource[source.url] =
        (gathered.state.tokensPerSource[source.url] ?? 0) + (source.tokens ?? 0);
    // A search none of whose sources gave a note the report may cite found nothing relevant.
    const useful = new Set(citable(newNotes).map((note) => note.query));
    addTopics(
      gathered.state,
      fresh,
      fresh.filter((query) => !useful.has(query)),
    );
    const findings = await think(
      ctx,
      ledger,
      { key: stepKeys.findings(scope, iteration), phase: 'analyze' },
      analyst.summarize({ question, notes: citable(gathered.notes), iteration, settings }),
    );
    gathered.state.findings = findings;
    const analysis = await think<ResearchStepOutputs['analyze']['value']>(
      ctx,
      ledger,
      {
        key: stepKeys.analyze(scope, iteration),
        phase: 'analyze',
        finish: async (judged) => {
          const update = { iteration, summary: findings, covered: judged.covered ?? [], open: judged.open ?? [] };
          await ctx.emit('findings-update', update);
          return judged;
        },
      },
      analyst.analyze({
        question,
        notes: citable(gathered.notes),
        newNotes: citable(newNotes),
        iteration,
        asked: gathered.asked,
        settings,
        findings,
      }),
    );
    applyAnalysis(gathered.state, analysis);
    if (analysis.done || ledger.exceeded(settings)) break;
    queries = analysis.nextQueries;
  }
}
