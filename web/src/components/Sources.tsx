import type { Source } from '../api-client.ts';

function location(url: string): string {
  return url.startsWith('file://') ? decodeURIComponent(url.slice(7)) : url;
}

export function Sources({ sources }: { sources: Source[] }) {
  if (sources.length === 0) return <p className="muted">No sources yet.</p>;
  return (
    <ol className="sources">
      {sources.map((source) => (
        <li key={source.id} id={source.citation ? `source-${source.citation}` : undefined}>
          <span className="badge">{source.citation ? `[${source.citation}]` : 'not cited'}</span>{' '}
          <strong>{source.title}</strong>
          <div className="muted small">
            {source.url.startsWith('http') ? (
              <a href={source.url} rel="noreferrer noopener" target="_blank">
                {source.url}
              </a>
            ) : (
              location(source.url)
            )}
            {source.metadata.fetched === false
              ? ` · not fetched: ${source.metadata.error ?? 'unknown reason'}`
              : ' · fetched'}
          </div>
        </li>
      ))}
    </ol>
  );
}
