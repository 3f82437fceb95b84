import { type MouseEvent, useState } from 'react';
import { markClaims } from '../../../src/research/mark-claims.ts';
import type { SessionDetail } from '../api-client.ts';
import { renderReport } from '../render-report.ts';

/**
 * The report, rendered safely, its versions selectable. A citation opens its passage (`onCite`);
 * a flagged claim's marker shows why it was flagged.
 */
export function Report({
  detail,
  onCite,
}: {
  detail: SessionDetail;
  onCite: (citation: { number: number; version: number }) => void;
}) {
  const versions = detail.report.versions;
  const [chosen, setChosen] = useState<number | null>(null);
  const [reason, setReason] = useState<string | null>(null);
  const version = versions.find((each) => each.version === chosen) ?? versions.at(-1);
  if (!version) return <p className="muted">No report yet.</p>;
  const citations = new Set(detail.sources.flatMap((source) => (source.citation === null ? [] : [source.citation])));
  const flagged = version.claims.filter((claim) => claim.verdict !== 'supported');

  function onClick(event: MouseEvent<HTMLElement>) {
    const target = (event.target as HTMLElement).closest('button');
    if (!target) return;
    const number = Number(target.dataset.citation);
    if (number) onCite({ number, version: version!.version });
    else if (target.dataset.reason) setReason(target.dataset.reason);
  }

  return (
    <div className="report">
      {versions.length > 1 && (
        <label className="inline">
          Version
          <select value={version.version} onChange={(event) => setChosen(Number(event.target.value))}>
            {versions.map((each) => (
              <option key={each.version} value={each.version}>
                {each.version} · {new Date(each.createdAt).toLocaleString()}
              </option>
            ))}
          </select>
        </label>
      )}
      {reason && (
        <p className="flag-reason" role="status">
          Flagged: {reason}{' '}
          <button type="button" className="link" onClick={() => setReason(null)}>
            Dismiss
          </button>
        </p>
      )}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: the buttons inside handle keys themselves (Enter and Space click a button) */}
      <article
        onClick={onClick}
        // biome-ignore lint/security/noDangerouslySetInnerHtml: renderReport escapes any HTML in the Markdown; sources never run script
        dangerouslySetInnerHTML={{
          __html: renderReport(markClaims(version.report, flagged as Parameters<typeof markClaims>[1]), {
            citations,
            flagged,
          }),
        }}
      />
    </div>
  );
}
