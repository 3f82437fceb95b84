import { isSymbolTerm, stem, stems, symbolTerms } from '../../shared/terms.ts';
import type { PassageHit } from '../store.ts';
import { fieldCounts } from './field-counts.ts';

/**
 * The ranking of full-text candidates: BM25F over a passage's title, headings and text, a bonus for
 * a page or section named for the query, prose above link lists, release notes below the reference.
 */

/** How much a passage's links and a navigation page lower its rank: prose first, link lists last. */
function proseWeight(linkDensity: number, navigation: boolean): number {
  return (1 - 0.8 * Math.min(1, linkDensity)) * (navigation ? 0.05 : 1);
}

/** Field weights and length normalization of the BM25F ranking (title and headings count more than text). */
const FIELDS = {
  title: { weight: 3, b: 0.5 },
  headings: { weight: 2, b: 0.5 },
  text: { weight: 1, b: 0.75 },
} as const;
type Field = keyof typeof FIELDS;
const K1 = 1.2;

interface Candidate {
  hit: PassageHit;
  /** Stem counts per field. */
  counts: Record<Field, Map<string, number>>;
  lengths: Record<Field, number>;
  headingStems: Set<string>[];
}

/** Adds how often the query's symbols (`symbolTerms`) occur in a field to its word counts. */
function withSymbolCounts(
  field: { counts: Map<string, number>; length: number },
  text: string,
  query: readonly string[],
): { counts: Map<string, number>; length: number } {
  if (!query.some(isSymbolTerm)) return field;
  for (const symbol of symbolTerms(text))
    if (query.includes(symbol)) field.counts.set(symbol, (field.counts.get(symbol) ?? 0) + 1);
  return field;
}

export function candidate(hit: PassageHit, query: readonly string[]): Candidate {
  const inner = [...hit.text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((match) => match[1]!);
  const headings = [hit.headings.split(' › ').at(-1) ?? '', ...inner];
  // An API entry ("json.dumps(obj, *, skipkeys=False…)") is named by what comes before its arguments.
  const names = headings.flatMap((heading) => {
    const name = /^(?:class\s+|@)?([\w.]+)\s*\(/.exec(heading.replace(/`/g, ''))?.[1];
    return name ? [name, name.split('.').at(-1)!] : [];
  });
  const title = withSymbolCounts(fieldCounts(hit.title, query), hit.title, query);
  const heading = withSymbolCounts(fieldCounts(headings.join(' '), query), headings.join(' '), query);
  const text = withSymbolCounts(fieldCounts(hit.text, query), hit.text, query);
  return {
    hit,
    counts: { title: title.counts, headings: heading.counts, text: text.counts },
    lengths: { title: title.length, headings: heading.length, text: text.length },
    headingStems: [...headings, ...names].map((each) => new Set(stems(each))).filter((each) => each.size > 0),
  };
}

/** The subject part of a title ("json — JSON encoder and decoder" → "json"). */
function titleHead(title: string): Set<string> {
  return new Set(stems(title.split(/\s+[—–-]\s+|:\s/)[0] ?? ''));
}

/**
 * Release notes and changelogs, by their title ("What’s New In Python 3.8", "E.1. Release 15.2"): they
 * tell when something changed, and mention everything; a question about how something works is
 * answered by the reference. They count half, unless the query asks about change or versions.
 */
function isHistory(title: string): boolean {
  return /\b(?:what[’']?s new|release notes?|changelog|change log|changes in|release \d)/i.test(title);
}
const historyTerms = new Set(['new', 'chang', 'releas', 'version', 'add', 'deprecat', 'remov', 'histor'].map(stem));

/**
 * BM25F over the candidates: each field's term frequency normalized by that field's own length, so a
 * title repeated on every passage of a page does not favour the shortest passages; plus a bonus for a
 * section or page named exactly what the query asks about (a glossary entry, a module's page); times
 * the prose weight (link lists and navigation pages last) and the history weight (`isHistory`).
 */
export function rankCandidates(
  candidates: Candidate[],
  query: string[],
  idf: Map<string, number>,
  alternatives: ReadonlyMap<string, readonly [string, string]> = new Map(),
  /** Stems of synonyms the candidates were counted for → the query stem each stands for. */
  standsFor: ReadonlyMap<string, string> = new Map(),
): PassageHit[] {
  const average = (field: Field) =>
    Math.max(1, candidates.reduce((sum, each) => sum + each.lengths[field], 0) / Math.max(1, candidates.length));
  const averages = { title: average('title'), headings: average('headings'), text: average('text') };
  // What the query is about: its terms that are not everywhere ("python" in Python's own manual).
  // (Compound spellings of two query words are alternatives, never required.)
  const specific = query.filter((term) => (idf.get(term) ?? 0) >= 1.6 && !alternatives.has(term));
  const asksHistory = query.some((term) => historyTerms.has(term));
  const wanted = new Set(specific.length > 0 ? specific : query.filter((term) => !alternatives.has(term)));
  return candidates
    .map(({ hit, counts, lengths, headingStems }) => {
      // A field that writes two query words as one ("timezone") holds each of them.
      for (const [compound, parts] of alternatives)
        for (const field of Object.values(counts)) {
          const found = field.get(compound) ?? 0;
          if (found > 0) for (const part of parts) field.set(part, (field.get(part) ?? 0) + found);
        }
      for (const [synonym, term] of standsFor) {
        for (const field of Object.values(counts)) {
          const found = field.get(synonym) ?? 0;
          if (found > 0) field.set(term, (field.get(term) ?? 0) + found);
        }
        for (const heading of headingStems) if (heading.has(synonym)) heading.add(term);
      }
      let score = 0;
      for (const term of query) {
        let tf = 0;
        for (const field of Object.keys(FIELDS) as Field[]) {
          const { weight, b } = FIELDS[field];
          const frequency = counts[field].get(term) ?? 0;
          if (frequency > 0) tf += (weight * frequency) / (1 - b + (b * lengths[field]) / averages[field]);
        }
        if (tf > 0) score += (idf.get(term) ?? 0) * ((tf * (K1 + 1)) / (tf + K1));
      }
      // Named exactly: every specific query term, and nothing the query does not ask about.
      const named = (stemSet: Set<string>) =>
        [...wanted].every((term) => stemSet.has(term)) &&
        [...stemSet].every((term) => query.includes(term) || standsFor.has(term));
      // A page named for the subject (a module's page) is about it more surely than a section that is.
      const bonus = named(titleHead(hit.title)) ? score * 0.6 + 2 : headingStems.some(named) ? score * 0.4 + 1 : 0;
      const total =
        (score + bonus) *
        proseWeight(hit.linkDensity, hit.navigation) *
        (asksHistory || !isHistory(hit.title) ? 1 : 0.5);
      return { ...hit, score: Number(total.toFixed(6)) };
    })
    .sort((a, b) => b.score - a.score || a.passageId - b.passageId);
}
