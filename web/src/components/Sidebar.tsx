import { useEffect, useRef, useState } from 'react';
import { api, type SessionSummary } from '../api-client.ts';
import { groupByDate, relativeTime } from '../group-by-date.ts';

interface SidebarProps {
  current: string | null;
  navigate: (path: string) => void;
  refresh: number;
  onChange: () => void;
}

/** Sessions grouped by date, searchable, loading more as the list scrolls into view. */
export function Sidebar({ current, navigate, refresh, onChange }: SidebarProps) {
  const [query, setQuery] = useState('');
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [renaming, setRenaming] = useState<string | null>(null);
  const more = useRef<HTMLDivElement>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `refresh` changes when the app asks for a reload
  useEffect(() => {
    let cancelled = false;
    const load = () =>
      api
        .listSessions({ q: query })
        .then((page) => {
          if (cancelled) return;
          setSessions(page.sessions);
          setCursor(page.nextCursor);
          setError(null);
        })
        .catch((caught: Error) => !cancelled && setError(caught.message))
        .finally(() => !cancelled && setLoading(false));
    void load();
    // Statuses and progress change while research runs; a light poll keeps badges honest.
    const timer = setInterval(load, 3000);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [query, refresh]);

  useEffect(() => {
    if (!cursor || !more.current) return;
    const observer = new IntersectionObserver(async ([entry]) => {
      if (!entry?.isIntersecting) return;
      const page = await api.listSessions({ q: query, cursor });
      setSessions((existing) => [
        ...existing,
        ...page.sessions.filter((session) => !existing.some((each) => each.id === session.id)),
      ]);
      setCursor(page.nextCursor);
    });
    observer.observe(more.current);
    return () => observer.disconnect();
  }, [cursor, query]);

  async function rename(session: SessionSummary, title: string) {
    setRenaming(null);
    if (!title.trim() || title === session.title) return;
    try {
      await api.rename(session.id, title);
      onChange();
    } catch (caught) {
      setError((caught as Error).message);
    }
  }

  async function remove(session: SessionSummary) {
    if (!window.confirm(`Delete "${session.title}" and everything it holds?`)) return;
    try {
      await api.remove(session.id);
      if (current === session.id) navigate('/');
      onChange();
    } catch (caught) {
      setError((caught as Error).message);
    }
  }

  return (
    <nav className="sidebar" aria-label="Sessions">
      <button type="button" className="primary" onClick={() => navigate('/')}>
        New research
      </button>
      <input
        type="search"
        placeholder="Search sessions"
        aria-label="Search sessions"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
      />
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {loading && <p className="muted">Loading…</p>}
      {!loading && sessions.length === 0 && (
        <p className="muted">{query ? 'No sessions match.' : 'No sessions yet.'}</p>
      )}
      {groupByDate(sessions).map(([group, items]) => (
        <section key={group}>
          <h2 className="group">{group}</h2>
          <ul>
            {items.map((session) => (
              <li
                key={session.id}
                className={session.id === current ? 'session active' : 'session'}
                data-session-id={session.id}
              >
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
              </li>
            ))}
          </ul>
        </section>
      ))}
      {cursor && (
        <div ref={more} className="muted small">
          Loading more…
        </div>
      )}
    </nav>
  );
}
