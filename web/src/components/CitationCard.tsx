import { useEffect, useRef, useState } from 'react';
import { api, type Citation } from '../api-client.ts';

export interface HoveredCitation {
  number: number;
  version: number;
  /** Where the `[n]` is on screen: the card shows just below it (above, near the bottom). */
  rect: { left: number; top: number; bottom: number };
}

/**
 * A small card for the `[n]` under the pointer or the keyboard focus: the source's title, where it
 * is (site or path) and the words the report quotes from it. Each citation is read once per page.
 */
export function CitationCard({ sessionId, hovered }: { sessionId: string; hovered: HoveredCitation }) {
  const cache = useRef(new Map<string, Promise<Citation>>());
  const [citation, setCitation] = useState<Citation | null>(null);
  const key = `${hovered.version}:${hovered.number}`;

  useEffect(() => {
    let current = true;
    setCitation(null);
    let loading = cache.current.get(key);
    if (!loading) {
      loading = api.citation(sessionId, hovered.number, { version: hovered.version });
      cache.current.set(key, loading);
      loading.catch(() => cache.current.delete(key));
    }
    loading.then(
      (loaded) => current && setCitation(loaded),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [sessionId, key, hovered.number, hovered.version]);

  const below = hovered.rect.bottom + 200 < window.innerHeight;
  const style = {
    left: Math.max(8, Math.min(hovered.rect.left, window.innerWidth - 328)),
    ...(below ? { top: hovered.rect.bottom + 6 } : { bottom: window.innerHeight - hovered.rect.top + 6 }),
  };
  const quote = citation?.passages[0]?.quote;
  return (
    <div className="citation-card" role="tooltip" id="citation-card" style={style}>
      <strong>[{hovered.number}]</strong>{' '}
      {citation ? (
        <>
          <span className="source-title">{citation.title}</span>
          <span className="location small muted">{citation.location}</span>
          {quote && <q>{quote.length > 240 ? `${quote.slice(0, 240)}…` : quote}</q>}
        </>
      ) : (
        <span className="muted">Loading…</span>
      )}
    </div>
  );
}
