import type { SessionDetail } from '../api-client.ts';
import { renderReport } from '../render-report.ts';
import { researchProgress, stages } from '../research-progress.ts';
import type { LiveEvent } from '../use-session-events.ts';

const stageNames: Record<(typeof stages)[number], string> = {
  plan: 'Plan',
  research: 'Research',
  outline: 'Outline',
  write: 'Write',
  verify: 'Verify',
};

/**
 * The run in research terms: where it is among plan, research (iteration by iteration), outline,
 * write and verify; the queries searched, the sources read and the notes they gave; tokens and
 * cost; the findings so far; and the report as it is being written.
 */
export function ResearchProgress({
  detail,
  events,
  onShowJournal,
}: {
  detail: SessionDetail;
  events: LiveEvent[];
  onShowJournal: () => void;
}) {
  const maxIterations = Number((detail.settings as { maxIterations?: number }).maxIterations ?? 3);
  const progress = researchProgress(events, maxIterations);
  const current = progress.stage ? stages.indexOf(progress.stage) : -1;
  // The whole session's sums, from the journal (every run), read again as the run moves on.
  const ledger = detail.ledger;
  return (
    <div className="research-progress">
      <ol className="stages" aria-label="Research stages">
        {stages.map((stage, index) => (
          <li
            key={stage}
            className={index < current || progress.completed ? 'done' : index === current ? 'current' : 'todo'}
            aria-current={index === current && !progress.completed ? 'step' : undefined}
          >
            {stageNames[stage]}
            {stage === 'research' && progress.iteration > 0 ? ` ${progress.iteration} of ${progress.iterations}` : ''}
          </li>
        ))}
      </ol>
      <progress max={1} value={progress.fraction} aria-label="Research progress">
        {Math.round(progress.fraction * 100)}%
      </progress>
      <p className="muted small" title="The whole session, every run">
        {ledger.searches} searches · {ledger.sourcesRead} sources read ·{' '}
        {(ledger.inputTokens + ledger.outputTokens).toLocaleString()} tokens
        {ledger.costUsd > 0 ? ` · $${ledger.costUsd.toFixed(4)}` : ''}
        {progress.waiting ? ' · waiting for your review' : ''}
      </p>
      {progress.retrying && !progress.ended && (
        <p className="notice" role="status">
          Waiting for a provider to answer again: {progress.retrying.message} (next try in{' '}
          {Math.max(1, Math.round(progress.retrying.delayMs / 1000))} s). The research goes on by itself.
        </p>
      )}
      {progress.findings && (
        <section aria-label="Findings so far">
          <h3>Findings so far</h3>
          <p>{progress.findings}</p>
        </section>
      )}
      <div className="columns">
        <section aria-label="Searches">
          <h3>Searches</h3>
          {progress.queries.length === 0 ? (
            <p className="muted">None yet.</p>
          ) : (
            <ul className="queries">
              {progress.queries.map((query, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a query asked twice (two iterations) is two searches
                <li key={index} className={query.done ? 'done' : 'running'} aria-busy={!query.done}>
                  {query.query}
                </li>
              ))}
            </ul>
          )}
        </section>
        <section aria-label="Sources read">
          <h3>Sources read</h3>
          {progress.sources.length === 0 ? (
            <p className="muted">None yet.</p>
          ) : (
            <ul className="sources-read">
              {progress.sources.map((source, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a page read in two iterations is listed twice
                <li key={index}>
                  <span className="title">{source.title}</span>{' '}
                  <span className="muted small">
                    {source.where}
                    {source.notes !== undefined ? ` · ${source.notes} notes` : ''}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
      {progress.writing && !progress.completed && (
        <section className="report streaming" aria-label="The report as it is written" aria-live="polite">
          <h3>Writing the report</h3>
          {/* biome-ignore lint/security/noDangerouslySetInnerHtml: renderReport escapes all HTML in the Markdown */}
          <div dangerouslySetInnerHTML={{ __html: renderReport(progress.writing, { citations: new Set() }) }} />
        </section>
      )}
      <button type="button" className="link" onClick={onShowJournal}>
        Show the journal, step by step
      </button>
    </div>
  );
}
