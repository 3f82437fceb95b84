import type { SearchResult } from '../providers/search/search-provider.ts';
import { searchRelevance } from './relevance.ts';
import type { ResearchSettings } from './research-settings.ts';

/**
 * Which search results an iteration reads: in the analyst's order, each page once per iteration
 * (each passage once per session), never a navigation page, a link list, or a license nobody asked
 * about.
 */

/** Pages read beyond `sourcesPerQuery` from the run's first search (the question itself). */
const FIRST_SEARCH_EXTRA = 2;

/** A search result an iteration reads, with the query that found it. */
export interface ChosenSource {
  result: SearchResult;
  query: string;
  /** The result's score over the best score of its search (1 for the best), or by rank when unscored. */
  relevance: number;
  /** Its place in the run's first search, when that search found it (0: that search's best). */
  lead?: number;
}

/** True for results a report must never quote: navigation pages and link lists. */
function isNavigation(result: SearchResult): boolean {
  const metadata = (result.metadata ?? {}) as { navigation?: boolean; linkDensity?: number };
  return metadata.navigation === true || (metadata.linkDensity ?? 0) > 0.5;
}

/** A document's license or copying conditions, by its title ("GNU Free Documentation License"). */
const LEGAL_TITLE = /\blicen[cs]es?\b|^\s*(?:copying(?: conditions| this manual)?|copyright(?: notice)?)\s*$/i;
/** A question about licensing, which a license page may answer. */
const LEGAL_WORDS =
  /\b(?:licen[cs]\w*|cop(?:ying|yright\w*)|warrant\w*|redistribut\w*|distribut\w*|patent\w*|gpl|gfdl|fdl)\b/i;

/**
 * True for a page of legal boilerplate when no query asks about licensing: a manual's license
 * matches many everyday words ("add", "section", "numbers") and never answers how to do something.
 */
function isUnaskedLicense(result: SearchResult, queries: readonly string[]): boolean {
  return LEGAL_TITLE.test(result.title) && !queries.some((query) => LEGAL_WORDS.test(query));
}

/** A result's key among the passages read: the passage, or the page when the result is a whole page. */
function visitKey(result: SearchResult): string {
  const page = result.url.split('#')[0]!;
  const passage = (result.metadata as { passageId?: number } | undefined)?.passageId;
  return passage === undefined ? page : `${result.url}#passage-${passage}`;
}

/**
 * The pages whose first result in the run's first search an earlier run of the session already read,
 * each with that place: a follow-up ("What does -i do?" after "What does git clean -n do?") skips
 * those passages, and the page it is about would otherwise lose its place to pages first met further
 * down. A first run has read nothing, so this is empty for it.
 */
function placesOfReadPages(results: readonly SearchResult[], visited: ReadonlySet<string>): Map<string, number> {
  const places = new Map<string, number>();
  const seen = new Set<string>();
  results.forEach((result, place) => {
    const page = result.url.split('#')[0]!;
    if (seen.has(page)) return;
    seen.add(page);
    if (visited.has(visitKey(result))) places.set(page, place);
  });
  return places;
}

/**
 * The results an iteration reads: for each query, its results in the analyst's order, each page at
 * most once per iteration (and each passage at most once per session), never a navigation page or
 * link list, nor a license unless the queries ask about licensing, at most `sourcesPerQuery` per
 * query.
 */
export function chooseSources(
  searches: { results: SearchResult[] }[],
  queries: string[],
  alreadyVisited: string[],
  settings: ResearchSettings,
  options: { rank?: (results: SearchResult[]) => SearchResult[]; first?: boolean } = {},
) {
  const rank = options.rank ?? ((results: SearchResult[]) => results);
  const visited = new Set(alreadyVisited);
  const pages = new Set<string>();
  const chosen: ChosenSource[] = [];
  const places = options.first ? placesOfReadPages(searches[0]?.results ?? [], visited) : new Map<string, number>();
  searches.forEach((search, index) => {
    const scores = searchRelevance(search.results);
    const relevance = new Map(search.results.map((result, rank) => [result, scores[rank]!]));
    // The run's first search asks the question itself: its answer is among its first five pages far
    // more often than among its first three, so it is read deeper.
    const wanted = settings.sourcesPerQuery + (options.first && index === 0 ? FIRST_SEARCH_EXTRA : 0);
    let taken = 0;
    for (const result of rank(search.results)) {
      if (taken >= wanted) break;
      const page = result.url.split('#')[0]!;
      const key = visitKey(result);
      if (visited.has(key) || pages.has(page) || isNavigation(result) || isUnaskedLicense(result, queries)) continue;
      visited.add(key);
      pages.add(page);
      taken += 1;
      const lead = options.first && index === 0 ? search.results.indexOf(result) : (places.get(page) ?? -1);
      chosen.push({
        result,
        query: queries[index]!,
        relevance: Number(relevance.get(result)!.toFixed(4)),
        ...(lead >= 0 ? { lead } : {}),
      });
    }
  });
  return { chosen, visited: [...visited] };
}
