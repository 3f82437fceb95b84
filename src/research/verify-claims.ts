import { stems } from '../shared/terms.ts';
import type { ClaimJudgment } from './analyst.ts';
import { applyCitationOrder, citedNumbers } from './citations.ts';
import type { ClaimResult, Note } from './research-types.ts';

/** Share of a cited claim's content words its cited passages must hold for the lexical check to pass. */
export const SUPPORT_THRESHOLD = 0.5;
/**
 * Least share a claim needs for a model's "entailed" to count: a paraphrase shares some words with
 * its passage; a claim sharing almost none is about something else, whatever a model says.
 */
export const ENTAILMENT_FLOOR = 0.25;

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Paragraphs of a section that carry prose (wrapped lines joined; each list item its own): not
 * headings, tables, rules, or fenced code.
 */
function proseParagraphs(text: string): string[] {
  const paragraphs: string[] = [];
  let open: string[] = [];
  const close = () => {
    if (open.length) paragraphs.push(open.join(' '));
    open = [];
  };
  let fenced = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    const fence = trimmed.startsWith('```');
    if (fence) fenced = !fenced;
    if (fence || fenced || !trimmed || /^#{1,6}\s|^\||^([-*_]\s*){3,}$/.test(trimmed)) {
      close();
      continue;
    }
    const item = /^([-*+]|\d+[.)])\s+/.exec(trimmed);
    if (item) close();
    open.push(item ? trimmed.slice(item[0].length) : trimmed);
  }
  close();
  return paragraphs;
}

/**
 * The sentences of a section's Markdown, in order. Citation markers a writer puts after the full
 * stop ("… sea. [2] Next …") belong to the sentence before them.
 */
export function splitClaims(text: string): string[] {
  const claims: string[] = [];
  for (const paragraph of proseParagraphs(text)) {
    for (const { segment } of segmenter.segment(paragraph)) {
      const leading = /^(\s*\[\d+(?:\s*,\s*\d+)*\])+/.exec(segment)?.[0];
      let sentence = segment;
      if (leading && claims.length > 0) {
        claims[claims.length - 1] = `${claims[claims.length - 1]!} ${leading.trim()}`;
        sentence = segment.slice(leading.length);
      }
      if (sentence.trim()) claims.push(sentence.trim());
    }
  }
  return claims;
}

/** True for a sentence that states something checkable: several content words, not a question or a lead-in. */
export function isFactual(sentence: string): boolean {
  const plain = sentence.replace(/\[[\d,\s]+\]/g, '').trim();
  if (/[?:]$/.test(plain)) return false;
  return new Set(stems(plain)).size >= 4;
}

/** A claim as first checked, in the draft's own numbering (before sources are renumbered). */
export interface DraftClaim extends ClaimResult {
  /** Lexical support: the share of its content words found in the passages it cites. */
  share: number;
  /** The passages its known citations point to. */
  passages: string[];
}

/**
 * Checks every sentence of the drafted sections against the passages its citations point to (the
 * quotes of the notes taken from those sources): a cited claim is supported when they hold most of
 * its content words, unsupported when they
 * do not, and a factual sentence without a citation is uncited. Markers that name no source of the
 * report are recorded on the claim. Deterministic and cheap; a model's judgment can refine it.
 */
export function checkClaims(
  sections: { title: string; text: string }[],
  urlByNumber: ReadonlyMap<number, string>,
  notes: readonly Note[],
): DraftClaim[] {
  const claims: DraftClaim[] = [];
  for (const section of sections) {
    for (const claim of splitClaims(section.text)) {
      const cited = [...new Set(citedNumbers(claim))];
      const known = cited.filter((number) => urlByNumber.has(number));
      const unknown = cited.filter((number) => !urlByNumber.has(number));
      const base = {
        section: section.title,
        claim,
        citations: known,
        ...(unknown.length ? { unknownCitations: unknown } : {}),
      };
      if (known.length === 0) {
        if (!isFactual(claim) && unknown.length === 0) continue;
        claims.push({
          ...base,
          verdict: 'uncited',
          reason: unknown.length
            ? `it cites ${unknown.map((number) => `[${number}]`).join(', ')}, which names no source of this report`
            : 'no source is cited for it',
          share: 0,
          passages: [],
        });
        continue;
      }
      const urls = new Set(known.map((number) => urlByNumber.get(number)));
      // The sources' own words only: a model's paraphrase in a note is no evidence of itself.
      const passages = notes
        .filter((note) => urls.has(note.url))
        .map((note) => (note.follows ? `${note.quote ?? note.text}\n${note.follows}` : (note.quote ?? note.text)));
      const support = new Set(passages.flatMap((passage) => stems(passage)));
      const words = [...new Set(stems(claim.replace(/\[[\d,\s]+\]/g, '')))];
      const share = words.length ? words.filter((word) => support.has(word)).length / words.length : 1;
      const supported = share >= SUPPORT_THRESHOLD;
      claims.push({
        ...base,
        verdict: supported ? 'supported' : 'unsupported',
        reason: `${Math.round(share * 100)}% of its content words appear in the cited sources' passages`,
        share,
        passages,
      });
    }
  }
  return claims;
}

/**
 * The final verdicts: a model's judgment (when one was asked) decides for the cited claims it
 * judged — an "entailed" only counts for a claim that shares some words with its passages — and
 * the lexical check for the rest; text and numbers follow the report's final numbering.
 */
export function settleClaims(
  drafts: DraftClaim[],
  judgments: ReadonlyMap<number, ClaimJudgment>,
  order: ReadonlyMap<number, number>,
): ClaimResult[] {
  return drafts.map((draft, index) => {
    const { share, passages: _passages, ...claim } = draft;
    const judged = draft.citations.length > 0 ? judgments.get(index) : undefined;
    const settled: ClaimResult = {
      ...claim,
      claim: applyCitationOrder(claim.claim, order),
      citations: claim.citations.map((number) => order.get(number)!).filter((number) => number !== undefined),
    };
    if (!judged) return settled;
    const overlap = `word overlap ${Math.round(share * 100)}%`;
    if (judged.supported && share < ENTAILMENT_FLOOR)
      return {
        ...settled,
        verdict: 'unsupported',
        reason: `the model judged it entailed, but it shares too few words with the cited passages (${overlap})`,
      };
    return {
      ...settled,
      verdict: judged.supported ? 'supported' : 'unsupported',
      reason: `${judged.supported ? 'entailed' : 'not entailed'} by the cited passages, as the model judged${judged.reason ? `: ${judged.reason}` : ''} (${overlap})`,
    };
  });
}

/** Counts of each verdict. */
export function tallyClaims(claims: readonly ClaimResult[]) {
  return {
    supported: claims.filter((claim) => claim.verdict === 'supported').length,
    unsupported: claims.filter((claim) => claim.verdict === 'unsupported').length,
    uncited: claims.filter((claim) => claim.verdict === 'uncited').length,
  };
}

/**
 * What a report says after its sections about how far it can be trusted: who wrote it and how many
 * of its claims were checked (a report that cites nothing is never called verified), then each
 * flagged claim with why. It follows the sections, so the text that streamed while they were
 * written stays the report's beginning; a reader's view marks the claims in place (`markClaims`).
 */
export function claimsTrailer(analyst: { name: string; usesModel: boolean }, claims: readonly ClaimResult[]): string {
  // Quoted passages are labelled as what they are: the source's words, chosen by the question's words.
  if (!analyst.usesModel)
    return '_Made without a language model: each passage is quoted word for word from the document named under it. Quarry chose the passages by the words of the question; it did not check that they answer it._\n';
  const tally = tallyClaims(claims);
  const by = `Written by ${analyst.name}`;
  if (tally.supported + tally.unsupported === 0)
    return `_${by}. No sentence cites a source, so nothing in this report is verified._\n`;
  const flagged = claims.filter((claim) => claim.verdict !== 'supported');
  const checks = `${tally.supported} of ${claims.length} claims checked against their cited sources`;
  if (flagged.length === 0) return `_${by}. ${checks}; every claim cites a source that supports it._\n`;
  return `_${by}. ${checks}; ${flagged.length} flagged (${tally.unsupported} unsupported, ${tally.uncited} uncited):_\n\n${flaggedList(flagged)}`;
}

function flaggedList(flagged: readonly ClaimResult[]): string {
  const label = (claim: ClaimResult) => (claim.verdict === 'uncited' ? 'Uncited' : 'Unverified');
  return `${flagged.map((claim) => `- ${label(claim)}: “${claim.claim}” — ${claim.reason}`).join('\n')}\n`;
}

/** An answer's flagged claims, each with why, and a blank line after; nothing when none is flagged. */
export function flaggedClaims(claims: readonly ClaimResult[]): string {
  const flagged = claims.filter((claim) => claim.verdict !== 'supported');
  return flagged.length ? `${flaggedList(flagged)}\n` : '';
}

export { markClaims } from './mark-claims.ts';
