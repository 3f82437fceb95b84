import type { SearchResult } from '../../providers/search/search-provider.ts';
import { type QuestionProfile, searchRelevance } from '../relevance.ts';
import { lastHeading, namedBy, namesSubject, titleHead } from './headings.ts';

/**
 * The results of one search in the order research should read them, judged with what the search
 * did not know: the question. A result whose section or page is named for the question's subject
 * (a glossary entry for "What is a decorator?", a module's page named for it) or whose heading
 * names the question's terms moves up; otherwise the search's own order stands. Stable: ties keep
 * the search's order.
 */
export function rankResults(profile: QuestionProfile, results: readonly SearchResult[]): SearchResult[] {
  const relevance = searchRelevance(results);
  return results
    .map((result, index) => {
      const headings = String((result.metadata as { headings?: string } | undefined)?.headings ?? '');
      const heading = lastHeading(headings);
      const subject = namesSubject(profile, heading) || namesSubject(profile, titleHead(result.title));
      const named = Math.max(namedBy(profile, heading), namedBy(profile, titleHead(result.title)));
      const score = 0.6 * relevance[index]! + 0.4 * named + (subject ? 0.5 : 0);
      return { result, score, index };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map((entry) => entry.result);
}
