import { useState } from 'react';
import type { SessionDetail } from '../api-client.ts';
import { renderReport } from '../render-report.ts';

/** The report, rendered safely, with its versions selectable. */
export function Report({ detail, streaming }: { detail: SessionDetail; streaming: string }) {
  const versions = detail.report.versions;
  const [chosen, setChosen] = useState<number | null>(null);
  const version = versions.find((each) => each.version === chosen) ?? versions.at(-1);
  if (!version) {
    return streaming ? (
      <div className="report streaming" aria-live="polite">
        <p className="muted">Writing…</p>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: renderReport escapes all HTML in the Markdown */}
        <div dangerouslySetInnerHTML={{ __html: renderReport(streaming, []) }} />
      </div>
    ) : (
      <p className="muted">No report yet.</p>
    );
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
      {/* biome-ignore lint/security/noDangerouslySetInnerHtml: renderReport escapes any HTML in the Markdown; sources never run script */}
      <article dangerouslySetInnerHTML={{ __html: renderReport(version.report, detail.sources) }} />
    </div>
  );
}
