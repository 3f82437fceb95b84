import { displayLocation } from '../research/citations.ts';
import { locateQuote } from '../research/quotes.ts';
import type { ResearchOutput, SourceText } from '../research/research-types.ts';
import { isStepOf } from '../research/step-keys.ts';
import { QuarryError } from '../shared/errors.ts';
import type { ServiceContext } from './service-context.ts';
import { reportVersions } from './session-queries.ts';

/** Characters of the source shown on each side of a quoted passage. */
const CONTEXT_CHARS = 280;

/** A passage of a cited source: the words the report rests on, with the text around them. */
export interface CitedPassage {
  before: string;
  quote: string;
  after: string;
}

/** What `[n]` of a report points to: the source, what the report says with it, and where the source says so. */
export interface CitationView {
  number: number;
  url: string;
  title: string;
  /** The address as a reader recognizes it (a file path for local documents). */
  location: string;
  version: number;
  /** The report's sentences that cite it, with how each fared against its sources. */
  claims: { claim: string; verdict: string; reason: string }[];
  /** The source's own words behind the citation, in place (empty when its text was not kept). */
  passages: CitedPassage[];
}

function citationNotFound(number: number, version: number): QuarryError {
  return new QuarryError('NOT_FOUND', `Report version ${version} cites no source [${number}].`, {
    details: { number, version },
  });
}

/**
 * The passage behind one citation of a report version (the latest by default): the cited source,
 * the claims that cite it, and each checked quote of its notes shown in the text that was read.
 */
export async function citationPassage(
  context: ServiceContext,
  request: { sessionId: string; number: number; version?: number },
): Promise<CitationView> {
  const runs = await context.store.listRuns(request.sessionId);
  const versions = reportVersions(runs);
  const chosen = request.version === undefined ? versions.at(-1) : versions[request.version - 1];
  if (!chosen)
    throw new QuarryError(
      'NOT_FOUND',
      `Session "${request.sessionId}" has no report version ${request.version ?? ''}.`,
    );
  const output = runs.find((run) => run.id === chosen.runId)!.output as ResearchOutput;
  const source = output.citations.find((each) => each.number === request.number);
  if (!source) throw citationNotFound(request.number, chosen.version);
  const quotes = [
    ...new Set(
      output.notes
        .filter((note) => note.url === source.url && note.verified !== false)
        .map((note) => note.quote ?? note.text),
    ),
  ];
  const texts = (await context.store.listSteps(request.sessionId, { includeSuperseded: true }))
    .filter((step) => isStepOf(step.key, 'read') && step.status === 'completed')
    .map((step) => step.output as SourceText)
    .filter((read) => read?.url === source.url)
    .map((read) => read.text);
  const passages: CitedPassage[] = [];
  for (const quote of quotes) {
    for (const text of texts) {
      const place = locateQuote(text, quote);
      if (!place) continue;
      const from = Math.max(0, place.start - CONTEXT_CHARS);
      const to = Math.min(text.length, place.end + CONTEXT_CHARS);
      passages.push({
        before: `${from > 0 ? '…' : ''}${text.slice(from, place.start)}`,
        quote: text.slice(place.start, place.end),
        after: `${text.slice(place.end, to)}${to < text.length ? '…' : ''}`,
      });
      break;
    }
  }
  return {
    number: source.number,
    url: source.url,
    title: source.title,
    location: displayLocation(source.url),
    version: chosen.version,
    claims: chosen.claims
      .filter((claim) => claim.citations.includes(source.number))
      .map(({ claim, verdict, reason }) => ({ claim, verdict, reason })),
    passages,
  };
}
