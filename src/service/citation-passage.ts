import { displayLocation } from '../research/citations.ts';
import { locateQuote } from '../research/quotes.ts';
import type { CitedSource, ClaimResult } from '../research/research-types.ts';
import { runOutput, stepOutput } from '../research/step-outputs.ts';
import { QuarryError } from '../shared/errors.ts';
import type { Run } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';
import { answerCitations, reportVersions } from './session-queries.ts';

/** Characters of the source shown on each side of a quoted passage. */
const CONTEXT_CHARS = 280;

/** A passage of a cited source: the words the report rests on, with the text around them. */
export interface CitedPassage {
  before: string;
  quote: string;
  after: string;
}

/** What `[n]` of a text (a report version, or an answer) points to, and where the source says so. */
export interface CitationView {
  number: number;
  url: string;
  title: string;
  /** The address as a reader recognizes it (a file path for local documents). */
  location: string;
  /** The report version whose `[n]` this is; null for an answer. */
  version: number | null;
  /** The conversation answer (its message id) whose `[n]` this is; null for a report version. */
  answer: string | null;
  /** The text's sentences that cite it, with how each fared against its sources. */
  claims: { claim: string; verdict: string; reason: string }[];
  /** The source's own words behind the citation, in place (empty when its text was not kept). */
  passages: CitedPassage[];
}

/** The numbers and claims of the text a citation is read in: a report version, or an answer. */
interface CitingText {
  citations: CitedSource[];
  claims: ClaimResult[];
  version: number | null;
  answer: string | null;
  /** How the text is named in an error ("Report version 2", "This answer"). */
  name: string;
}

async function citingText(
  context: ServiceContext,
  request: { sessionId: string; version?: number; answer?: string },
  runs: Run[],
): Promise<CitingText> {
  if (request.answer !== undefined) {
    const messages = await context.store.listMessages(request.sessionId);
    const found = answerCitations(messages, runs).get(request.answer);
    if (!found)
      throw new QuarryError(
        'NOT_FOUND',
        `Session "${request.sessionId}" has no answer "${request.answer}" with citations of its own (a report version's are read with ?version=).`,
        { details: { answer: request.answer } },
      );
    return { ...found, version: null, answer: request.answer, name: 'This answer' };
  }
  const versions = reportVersions(runs);
  const chosen = request.version === undefined ? versions.at(-1) : versions[request.version - 1];
  if (!chosen)
    throw new QuarryError(
      'NOT_FOUND',
      `Session "${request.sessionId}" has no report version ${request.version ?? ''}.`,
    );
  return {
    citations: chosen.citations,
    claims: chosen.claims,
    version: chosen.version,
    answer: null,
    name: `Report version ${chosen.version}`,
  };
}

/** Where a passage shown around a quote starts: at a word's start, never mid-word. */
function wordStart(text: string, from: number): number {
  if (from <= 0) return 0;
  const space = text.slice(from).search(/\s/);
  return space < 0 ? from : from + space + 1;
}

/** Where it ends: after a word, never mid-word. */
function wordEnd(text: string, to: number): number {
  if (to >= text.length) return text.length;
  const space = text.slice(0, to).search(/\s\S*$/);
  return space < 0 ? to : space;
}

/**
 * The passage behind one citation of a text: a report version (the latest by default) or, with
 * `answer`, an answer of the conversation, each under its own numbers. The cited source, the claims
 * that cite it, and each checked quote of the session's notes from it, shown in the text that was
 * read (each once, cut at word boundaries).
 */
export async function citationPassage(
  context: ServiceContext,
  request: { sessionId: string; number: number; version?: number; answer?: string },
): Promise<CitationView> {
  const runs = await context.store.listRuns(request.sessionId);
  const cited = await citingText(context, request, runs);
  const source = cited.citations.find((each) => each.number === request.number);
  if (!source)
    throw new QuarryError('NOT_FOUND', `${cited.name} cites no source [${request.number}].`, {
      details: { number: request.number, version: cited.version, answer: cited.answer },
    });
  // The notes of every completed run: an answer, or a version researched further, may cite a
  // source an earlier run read.
  const notes = runs.filter((run) => run.status === 'completed').flatMap((run) => runOutput(run)?.notes ?? []);
  const quotes = [
    ...new Set(
      notes.filter((note) => note.url === source.url && note.verified !== false).map((note) => note.quote ?? note.text),
    ),
  ];
  const texts = (await context.store.listSteps(request.sessionId, { includeSuperseded: true }))
    .map((step) => stepOutput(step, 'read'))
    .filter((read) => read?.url === source.url)
    .map((read) => read!.text);
  const passages: CitedPassage[] = [];
  const shown = new Set<string>();
  for (const quote of quotes) {
    for (const text of texts) {
      const place = locateQuote(text, quote);
      if (!place) continue;
      const key = `${place.start}:${place.end}`;
      if (shown.has(key)) break;
      shown.add(key);
      const from = wordStart(text, Math.max(0, place.start - CONTEXT_CHARS));
      const to = wordEnd(text, Math.min(text.length, place.end + CONTEXT_CHARS));
      passages.push({
        before: `${from > 0 ? '…' : ''}${text.slice(Math.min(from, place.start), place.start)}`,
        quote: text.slice(place.start, place.end),
        after: `${text.slice(place.end, Math.max(to, place.end))}${to < text.length ? '…' : ''}`,
      });
      break;
    }
  }
  return {
    number: source.number,
    url: source.url,
    title: source.title,
    location: displayLocation(source.url),
    version: cited.version,
    answer: cited.answer,
    claims: cited.claims
      .filter((claim) => claim.citations.includes(source.number))
      .map(({ claim, verdict, reason }) => ({ claim, verdict, reason })),
    passages,
  };
}
