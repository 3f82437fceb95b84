import { useEffect, useRef, useState } from 'react';
import { api, type Citation, type CitedIn } from '../api-client.ts';
import { renderPassage } from '../render-report.ts';

/**
 * What a citation points to, beside the report: the source's title and address, the report's
 * sentences that cite it (with their verdicts), and the source's own words in place (its Markdown
 * rendered), highlighted.
 */
export function CitationPanel({
  sessionId,
  number,
  of,
  onClose,
}: {
  sessionId: string;
  number: number;
  /** The text whose `[number]` this is: its numbers are its own. */
  of: CitedIn;
  onClose: () => void;
}) {
  const { version, answer } = of;
  const [citation, setCitation] = useState<Citation | null>(null);
  const [error, setError] = useState<string | null>(null);
  const close = useRef<HTMLButtonElement>(null);

  // Closed, the panel gives focus back to what opened it (a citation, a source card), not to the page's top.
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    return () => {
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  useEffect(() => {
    setCitation(null);
    setError(null);
    api.citation(sessionId, number, { version, answer }).then(setCitation, (caught: Error) => setError(caught.message));
    close.current?.focus();
  }, [sessionId, number, version, answer]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const web = citation && /^https?:\/\//.test(citation.url);
  return (
    <aside className="citation-panel" aria-label={`Source ${number}`}>
      <header>
        <h2>[{number}]</h2>
        <button type="button" ref={close} onClick={onClose} aria-label="Close the source">
          Close
        </button>
      </header>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {!citation && !error && <p className="muted">Loading…</p>}
      {citation && (
        <>
          <h3 className="source-title">{citation.title}</h3>
          <p className="location small">
            {web ? (
              <a href={citation.url} rel="noreferrer noopener" target="_blank">
                {citation.location}
              </a>
            ) : (
              citation.location
            )}
          </p>
          {citation.passages.length === 0 ? (
            <p className="muted">The text of this source was not kept with the session.</p>
          ) : (
            citation.passages.map((passage, index) => (
              <blockquote
                // biome-ignore lint/suspicious/noArrayIndexKey: passages are in source order and never reordered
                key={index}
                className="passage"
                // biome-ignore lint/security/noDangerouslySetInnerHtml: rendered by renderPassage (no HTML, no images)
                dangerouslySetInnerHTML={{ __html: renderPassage(passage) }}
              />
            ))
          )}
          {citation.claims.length > 0 && (
            <section aria-label={answer ? 'Where the answer cites it' : 'Where the report cites it'}>
              <h3>{answer ? 'Where the answer cites it' : 'Where the report cites it'}</h3>
              <ul className="claims">
                {citation.claims.map((claim, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: claims are in report order
                  <li key={index} className={`claim ${claim.verdict}`}>
                    <span className={`badge ${claim.verdict}`}>{claim.verdict}</span> {claim.claim}
                    {claim.verdict !== 'supported' && <span className="muted small"> — {claim.reason}</span>}
                  </li>
                ))}
              </ul>
            </section>
          )}
        </>
      )}
    </aside>
  );
}
