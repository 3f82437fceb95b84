import { termList } from '../shared/terms.ts';
import { citedNumbers } from './citations.ts';
import type { CitedSource, FlaggedClaim, Note } from './research-types.ts';

/** Sentences of a section that carry `[n]` markers. */
function claims(text: string): string[] {
  return text.split(/(?<=[.!?])\s+(?=[A-Z0-9"“(])/).filter((sentence) => /\[\d/.test(sentence));
}

/**
 * Checks every cited claim against the notes taken from the sources it cites: a claim whose content
 * words mostly do not appear in those notes is flagged. Lexical, deterministic and cheap; it catches
 * citations that point at the wrong source and claims a model invented.
 */
export function verifyClaims(sections: { title: string; text: string }[], sources: CitedSource[], notes: Note[], threshold = 0.5): FlaggedClaim[] {
  const urlByNumber = new Map(sources.map((source) => [source.number, source.url]));
  const flagged: FlaggedClaim[] = [];
  for (const section of sections) {
    for (const claim of claims(section.text)) {
      const numbers = citedNumbers(claim);
      const support = new Set(notes.filter((note) => numbers.some((number) => urlByNumber.get(number) === note.url)).flatMap((note) => termList(note.text)));
      const words = termList(claim.replace(/\[[\d,\s]+\]/g, ''));
      if (words.length === 0) continue;
      const share = words.filter((word) => support.has(word)).length / words.length;
      if (share < threshold) {
        flagged.push({ section: section.title, claim: claim.trim(), citations: numbers, reason: `only ${Math.round(share * 100)}% of its words appear in the cited sources' notes` });
      }
    }
  }
  return flagged;
}

/** Marks flagged claims in the report text and lists them at the end. */
export function markFlagged(report: string, flagged: FlaggedClaim[]): string {
  let marked = report;
  for (const claim of flagged) marked = marked.replace(claim.claim, `${claim.claim} **[unverified]**`);
  if (flagged.length === 0) return marked;
  return `${marked}\n## Verification\n\n${flagged.length} claim(s) could not be matched to their cited sources and are marked **[unverified]**.\n`;
}
