import { useEffect, useState } from 'react';
import { api } from '../api-client.ts';
import { copyText } from './Report.tsx';

/**
 * A read-only share link for the session's report: anyone with the link reads the report (no
 * sign-in, no script); making a new link ends the old one; "Stop sharing" ends it at once. The link
 * is shown only when it is made (the server keeps only its hash).
 */
export function ShareMenu({
  sessionId,
  hasReport,
  online,
}: {
  sessionId: string;
  hasReport: boolean;
  online: boolean;
}) {
  const [sharedAt, setSharedAt] = useState<string | null>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  useEffect(() => {
    setUrl(null);
    setNote(null);
    api
      .shareState(sessionId)
      .then((state) => setSharedAt(state.sharedAt))
      .catch(() => setSharedAt(null));
  }, [sessionId]);

  async function share() {
    try {
      const link = await api.share(sessionId);
      setUrl(link.url);
      setSharedAt(link.sharedAt);
      setNote((await copyText(link.url)) ? 'Link copied. Anyone with it can read the report.' : null);
    } catch (caught) {
      setNote((caught as Error).message);
    }
  }

  async function unshare() {
    try {
      await api.unshare(sessionId);
      setUrl(null);
      setSharedAt(null);
      setNote('Not shared: the link no longer opens anything.');
    } catch (caught) {
      setNote((caught as Error).message);
    }
  }

  return (
    <details className="menu share">
      <summary>Share</summary>
      <div className="share-panel">
        {url ? (
          <label>
            Read-only link
            <input className="share-url" readOnly value={url} onFocus={(event) => event.target.select()} />
          </label>
        ) : (
          <p className="muted small">
            {sharedAt
              ? `Shared since ${new Date(sharedAt).toLocaleString()}. A new link ends the old one.`
              : 'Anyone with a link can read the report, without signing in.'}
          </p>
        )}
        <button
          type="button"
          disabled={!online || !hasReport}
          title={hasReport ? undefined : 'No report yet'}
          onClick={() => void share()}
        >
          {sharedAt ? 'New link' : 'Create link'}
        </button>
        {sharedAt && (
          <button type="button" className="danger" disabled={!online} onClick={() => void unshare()}>
            Stop sharing
          </button>
        )}
        {note && (
          <p className="muted small" role="status">
            {note}
          </p>
        )}
      </div>
    </details>
  );
}
