import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type SessionSummary } from '../api-client.ts';
import { dateGroup, relativeTime } from '../group-by-date.ts';
import { type SessionFeedChange, useSessionFeed } from '../use-session-feed.ts';

interface SidebarProps {
  current: string | null;
  navigate: (path: string) => void;
}

/** A listed session, with the date group it was listed under (kept, so live updates never move it). */
interface Listed {
  session: SessionSummary;
  group: string;
}

function matches(session: SessionSummary, query: string): boolean {
  const needle = query.trim().toLowerCase();
  return !needle || `${session.title} ${session.question}`.toLowerCase().includes(needle);
}

/**
 * The user's sessions, newest first, searchable, loading more as the list scrolls. The server
 * pushes every change (a new session, a rename, progress, a status, a deletion), applied in place:
 * what was loaded stays loaded and nothing under the reader's eyes moves; new sessions appear on top.
 */
/** How long typing pauses before the sidebar searches. */
const SEARCH_PAUSE_MS = 250;

export function Sidebar({ current, navigate }: SidebarProps) {
  const [query, setQuery] = useState('');
  // What was last searched: the box's text once typing pauses, so a word is one request, not one a key.
  const [searched, setSearched] = useState('');
  const [listed, setListed] = useState<Listed[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [renaming, setRenaming] = useState<string | null>(null);
  const more = useRef<HTMLLIElement>(null);
  const queryRef = useRef(searched);
  queryRef.current = searched;
  useEffect(() => {
    const timer = setTimeout(() => setSearched(query.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [query]);

  /** Applies sessions to the list: known ones updated in place, new ones added on top. */
  const merge = useCallback((sessions: SessionSummary[]) => {
    setListed((existing) => {
      const byId = new Map(sessions.map((session) => [session.id, session]));
      const updated = existing.map((entry) => {
        const fresh = byId.get(entry.session.id);
        return fresh ? { ...entry, session: fresh } : entry;
      });
      const known = new Set(existing.map((entry) => entry.session.id));
      const added = sessions
        .filter((session) => !known.has(session.id) && matches(session, queryRef.current))
        .map((session) => ({ session, group: 'Today' }));
      return [...added, ...updated];
    });
  }, []);

  useEffect(() => {
    let cancelled = false;
    setLoading(true);
    api
      .listSessions({ q: searched })
      .then((page) => {
        if (cancelled) return;
        setListed(page.sessions.map((session) => ({ session, group: dateGroup(session.updatedAt) })));
        setCursor(page.nextCursor);
        setError(null);
      })
      .catch((caught: Error) => !cancelled && setError(caught.message))
      .finally(() => !cancelled && setLoading(false));
    return () => {
      cancelled = true;
    };
  }, [searched]);

  const onChange = useCallback(
    (change: SessionFeedChange) => {
      if (change.type === 'session') merge([change.session]);
      else if (change.type === 'session-delete')
        setListed((existing) => existing.filter((entry) => entry.session.id !== change.id));
      else
        void api.listSessions({ q: queryRef.current }).then(
          (page) => merge(page.sessions),
          () => undefined,
        );
    },
    [merge],
  );
  useSessionFeed(onChange);

  useEffect(() => {
    if (!cursor || !more.current) return;
    const observer = new IntersectionObserver(async ([entry]) => {
      if (!entry?.isIntersecting) return;
      observer.disconnect();
      try {
        const page = await api.listSessions({ q: searched, cursor });
        setListed((existing) => {
          const known = new Set(existing.map((each) => each.session.id));
          const next = page.sessions
            .filter((session) => !known.has(session.id))
            .map((session) => ({ session, group: dateGroup(session.updatedAt) }));
          return [...existing, ...next];
        });
        setCursor(page.nextCursor);
      } catch (caught) {
        setError((caught as Error).message);
      }
    });
    observer.observe(more.current);
    return () => observer.disconnect();
  }, [cursor, searched]);

  async function rename(session: SessionSummary, title: string) {
    setRenaming(null);
    if (!title.trim() || title === session.title) return;
    try {
      merge([await api.rename(session.id, title.trim())]);
    } catch (caught) {
      setError((caught as Error).message);
    }
  }

  async function remove(session: SessionSummary) {
    if (!window.confirm(`Delete "${session.title}" and everything it holds?`)) return;
    try {
      await api.remove(session.id);
      setListed((existing) => existing.filter((entry) => entry.session.id !== session.id));
      if (current === session.id) navigate('/');
    } catch (caught) {
      setError((caught as Error).message);
    }
  }

  let lastGroup = '';
  return (
    <nav className="sidebar" id="sessions" aria-label="Sessions">
      <button type="button" className="primary" onClick={() => navigate('/')}>
        New research
      </button>
      <input
        type="search"
        placeholder="Search titles and reports"
        aria-label="Search sessions"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
      />
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {loading && listed.length === 0 && <p className="muted">Loading…</p>}
      {!loading && listed.length === 0 && (
        <p className="muted">{searched ? 'No sessions match.' : 'No sessions yet.'}</p>
      )}
      <ul className="session-list">
        {listed.map(({ session, group }) => {
          const heading = group !== lastGroup ? group : null;
          lastGroup = group;
          return (
            <li
              key={session.id}
              className={session.id === current ? 'session active' : 'session'}
              data-session-id={session.id}
            >
              {heading && <h2 className="group">{heading}</h2>}
              <div className="session-row">
                {renaming === session.id ? (
                  <input
                    ref={(element) => element?.focus()}
                    aria-label="New title"
                    defaultValue={session.title}
                    onBlur={(event) => void rename(session, event.target.value)}
                    onKeyDown={(event) => {
                      if (event.key === 'Enter') void rename(session, event.currentTarget.value);
                      if (event.key === 'Escape') setRenaming(null);
                    }}
                  />
                ) : (
                  <a
                    href={`/sessions/${session.id}`}
                    aria-current={session.id === current ? 'page' : undefined}
                    onClick={(event) => {
                      event.preventDefault();
                      navigate(`/sessions/${session.id}`);
                    }}
                  >
                    <span className="title">{session.title}</span>
                    <span className={`badge ${session.status}`}>
                      {session.status}
                      {session.status === 'running' ? ` · ${session.progress.completedSteps} steps` : ''}
                    </span>
                    <span className="muted small">{relativeTime(session.updatedAt)}</span>
                  </a>
                )}
                <details className="menu">
                  <summary aria-label={`Actions for ${session.title}`}>⋯</summary>
                  <button type="button" onClick={() => setRenaming(session.id)}>
                    Rename
                  </button>
                  <button type="button" onClick={() => void remove(session)}>
                    Delete
                  </button>
                </details>
              </div>
            </li>
          );
        })}
        {cursor && (
          <li ref={more} className="muted small more">
            Loading more…
          </li>
        )}
      </ul>
    </nav>
  );
}
