import type { ClaimResult } from './research-types.ts';

/**
 * Flagged claims marked where they stand in a report, for reading it: a report's own text lists its
 * flagged claims after its sections (it is append-only, so it streams as written), and a reader's
 * view (the web UI, the Markdown and HTML exports) marks them in place. Pure: the web UI imports it.
 */

const markers: Record<ClaimResult['verdict'], string | null> = {
  supported: null,
  unsupported: '**[unverified]**',
  uncited: '**[uncited]**',
};

/** Where a claim stands in a text from `from` on, with any white space between its words. */
function findClaim(text: string, claim: string, from: number): { start: number; end: number } | null {
  const pattern = new RegExp(
    claim
      .split(/\s+/)
      .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\s+'),
    'g',
  );
  pattern.lastIndex = from;
  const match = pattern.exec(text);
  return match ? { start: match.index, end: match.index + match[0].length } : null;
}

/**
 * The report with a marker after each claim that is not supported, where it stands (claims in report
 * order). A report that already carries markers is returned as it is.
 */
export function markClaims(report: string, claims: readonly Pick<ClaimResult, 'claim' | 'verdict'>[]): string {
  // Reports written before reports listed their flagged claims carry their markers already.
  if (Object.values(markers).some((marker) => marker && report.includes(marker))) return report;
  let marked = report;
  let from = 0;
  for (const claim of claims) {
    const place = findClaim(marked, claim.claim, from);
    if (!place) continue;
    from = place.end;
    const marker = markers[claim.verdict];
    if (!marker) continue;
    marked = `${marked.slice(0, place.end)} ${marker}${marked.slice(place.end)}`;
    from = place.end + marker.length + 1;
  }
  return marked;
}
