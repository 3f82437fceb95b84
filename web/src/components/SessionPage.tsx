import { type KeyboardEvent, useCallback, useEffect, useRef, useState } from 'react';
import type { EventType } from '../../../src/shared/events.ts';
import { ApiError, api, type CitedIn, type SessionDetail } from '../api-client.ts';
import { conversationTurns } from '../conversation-turns.ts';
import { eventsShowSteps, journalEvents } from '../journal-events.ts';
import { useJournal } from '../use-journal.ts';
import { sameText, useNarrow } from '../use-narrow.ts';
import { useSessionEvents } from '../use-session-events.ts';
import { type SessionFeedChange, useSessionFeed } from '../use-session-feed.ts';
import { CitationPanel } from './CitationPanel.tsx';
import { Conversation } from './Conversation.tsx';
import { OutlineReview } from './OutlineReview.tsx';
import { Prompts } from './Prompts.tsx';
import { Report } from './Report.tsx';
import { ResearchProgress } from './ResearchProgress.tsx';
import { ShareMenu } from './ShareMenu.tsx';
import { Sources } from './Sources.tsx';
import { StepPicker } from './StepPicker.tsx';
import { Timeline } from './Timeline.tsx';

/** Events after which the session's details are read again (typed: a renamed event fails to compile). */
const refreshOn: ReadonlySet<EventType> = new Set<EventType>([
  'run-start',
  'run-end',
  'run-error',
  'input-request',
  'input-receive',
  'source-found',
  'session-create',
  'session-update',
]);

const tabs = ['report', 'progress', 'sources', 'journal'] as const;
type Tab = (typeof tabs)[number];
const tabNames: Record<Tab, string> = {
  report: 'Report',
  progress: 'Progress',
  sources: 'Sources',
  journal: 'Journal',
};

export function SessionPage({
  sessionId,
  navigate,
  online,
}: {
  sessionId: string;
  navigate: (path: string) => void;
  online: boolean;
}) {
  const [detail, setDetail] = useState<SessionDetail | null>(null);
  // Why the session could not be read (cleared once it reads again).
  const [error, setError] = useState<string | null>(null);
  // What went wrong with something the reader did: it stays until they dismiss it or act again,
  // never wiped by the next refresh.
  const [actionError, setActionError] = useState<string | null>(null);
  // Deleted while open (in another tab, by another client): the page says so and offers nothing.
  const [deleted, setDeleted] = useState(false);
  const [tab, setTab] = useState<Tab | null>(null);
  const [picker, setPicker] = useState<'resume' | 'fork' | null>(null);
  const [citation, setCitation] = useState<{ number: number; of: CitedIn } | null>(null);
  // The report version on screen, so exports and share links take the one the reader sees.
  const [shownVersion, setShownVersion] = useState<number | null>(null);
  const { events, connected } = useSessionEvents(sessionId);
  const journal = useJournal(
    sessionId,
    detail !== null && ['journal', 'progress'].includes(shownTab(tab, detail)) && !eventsShowSteps(events),
  );
  const narrow = useNarrow();
  const seen = useRef(0);
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});

  const load = useCallback(() => {
    api.getSession(sessionId).then(
      (loaded) => {
        setDetail(loaded);
        setError(null);
      },
      (caught: Error) => {
        if (caught instanceof ApiError && caught.status === 404) setDeleted(true);
        setError(caught.message);
      },
    );
  }, [sessionId]);
  // A delete anywhere else reaches this page on the live feed.
  useSessionFeed(
    useCallback(
      (change: SessionFeedChange) => {
        if (change.type === 'session-delete' && change.id === sessionId) setDeleted(true);
      },
      [sessionId],
    ),
  );

  useEffect(load, [load]);
  // The tab says which session it is and how it stands, so a finished run shows in the tab bar.
  const unseen = useFinishNotice(detail);
  useEffect(() => {
    if (!detail) return;
    // A run that ended while the tab was in the background is marked until the person looks.
    document.title = unseen ? `● ${detail.title} ${unseen} · Quarry` : `${detail.title} (${detail.status}) · Quarry`;
  }, [detail, unseen]);
  // Steps end often: the header's count follows them, read again at most once a second.
  const stepRefresh = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    const fresh = events.slice(seen.current);
    seen.current = events.length;
    if (fresh.some((event) => refreshOn.has(event.type))) load();
    else if (fresh.some((event) => event.type === 'step-end') && !stepRefresh.current)
      stepRefresh.current = setTimeout(() => {
        stepRefresh.current = null;
        load();
      }, 1_000);
  }, [events, load]);
  useEffect(
    () => () => {
      if (stepRefresh.current) clearTimeout(stepRefresh.current);
    },
    [],
  );
  // After a reconnect the live stream catches up by itself; the details are read again too.
  useEffect(() => {
    if (connected) load();
  }, [connected, load]);

  async function act(action: () => Promise<unknown>) {
    setActionError(null);
    try {
      await action();
      load();
    } catch (caught) {
      setActionError((caught as Error).message);
    }
  }

  /**
   * Deletes the session after the reader confirms; a running one is stopped first, and the
   * confirmation says so (the server refuses a plain delete of a running session).
   */
  async function remove(title: string, running: boolean) {
    const question = running
      ? `"${title}" is running. Stop it and delete it? Its journal and report go with it.`
      : `Delete "${title}"? Its journal and report go with it.`;
    if (!window.confirm(question)) return;
    await act(async () => {
      try {
        await api.remove(sessionId, { force: running });
      } catch (caught) {
        // It started running since the page last read it: ask again, now as a running session.
        if (!running && caught instanceof ApiError && caught.code === 'SESSION_ALREADY_RUNNING') {
          if (!window.confirm(`"${title}" has started running. Stop it and delete it?`)) return;
          await api.remove(sessionId, { force: true });
        } else throw caught;
      }
      navigate('/');
    });
  }

  function onTabKey(event: KeyboardEvent<HTMLButtonElement>) {
    const index = tabs.indexOf(shown);
    const next =
      event.key === 'ArrowRight'
        ? tabs[(index + 1) % tabs.length]
        : event.key === 'ArrowLeft'
          ? tabs[(index + tabs.length - 1) % tabs.length]
          : event.key === 'Home'
            ? tabs[0]
            : event.key === 'End'
              ? tabs[tabs.length - 1]
              : undefined;
    if (!next) return;
    event.preventDefault();
    setTab(next);
    tabRefs.current[next]?.focus();
  }

  if (deleted)
    return (
      <section className="deleted" aria-label="No session">
        {detail ? (
          <>
            <h2>This session was deleted</h2>
            <p>
              It was deleted while this page was open (in another tab, or by another client); nothing of it can be read
              or changed any more.
            </p>
          </>
        ) : (
          <>
            <h2>No such session</h2>
            <p>There is no session at this address for you: it was deleted, never existed, or is someone else's.</p>
          </>
        )}
        <button type="button" onClick={() => navigate('/')}>
          Start a new research
        </button>
      </section>
    );
  if (!detail)
    return error ? (
      <p className="error" role="alert">
        {error}
      </p>
    ) : (
      <p className="muted">Loading…</p>
    );
  const running = isRunning(detail);
  const shown = shownTab(tab, detail);
  // A session whose events do not tell its steps (one imported from a file) is shown from its journal.
  const stepEvents = journal ? [...journalEvents(journal, detail.sources, detail.status), ...events] : events;
  const conversation = conversationTurns(detail.messages);
  const latestVersion = detail.report.versions.at(-1)?.version;
  const exportVersion = shownVersion !== null && shownVersion !== latestVersion ? shownVersion : undefined;

  // What the reader can do besides stopping or resuming: a row on a wide screen, a menu on a phone.
  const secondary = (
    <>
      {!running && (
        <button type="button" disabled={!online} onClick={() => setPicker('resume')}>
          Resume from…
        </button>
      )}
      <button type="button" disabled={!online} onClick={() => setPicker('fork')}>
        Fork from…
      </button>
      <ShareMenu sessionId={sessionId} hasReport={detail.report.latest !== null} online={online} />
      <details className="menu export">
        <summary>Export</summary>
        {/* A report's formats need a report; without one they say so instead of leaving the app. */}
        {detail.report.latest === null ? (
          <>
            <button type="button" disabled title="No report yet">
              Markdown
            </button>
            <button type="button" disabled title="No report yet">
              HTML
            </button>
            <button type="button" disabled title="No report yet">
              PDF
            </button>
          </>
        ) : (
          <>
            <a className="button" href={api.exportUrl(sessionId, 'md', exportVersion)}>
              Markdown
            </a>
            <a className="button" href={api.exportUrl(sessionId, 'html', exportVersion)}>
              HTML
            </a>
            <a className="button" href={api.exportUrl(sessionId, 'pdf', exportVersion)}>
              PDF
            </a>
          </>
        )}
        <a className="button" href={api.exportUrl(sessionId, 'json')}>
          JSON
        </a>
      </details>
      <button type="button" className="danger" disabled={!online} onClick={() => void remove(detail.title, running)}>
        Delete
      </button>
    </>
  );

  return (
    <div className={citation ? 'session-page with-panel' : 'session-page'}>
      <div className="session-main">
        <header>
          <input
            className="title"
            aria-label="Title"
            key={detail.title}
            defaultValue={detail.title}
            disabled={!online}
            onBlur={(event) =>
              event.target.value.trim() &&
              event.target.value !== detail.title &&
              void act(() => api.rename(sessionId, event.target.value.trim()))
            }
            onKeyDown={(event) => event.key === 'Enter' && event.currentTarget.blur()}
          />
          {/* The question, unless the title already says it. */}
          {!sameText(detail.question, detail.title) && <p className="question">{detail.question}</p>}
          <p>
            <span className={`badge ${detail.status}`}>{detail.status}</span>{' '}
            <span className="muted small">
              {detail.resumePoint.completedSteps}/{detail.resumePoint.knownSteps} steps
              {running ? (connected ? ' · live' : ' · reconnecting…') : ''}
              {running && <Elapsed since={detail.runs.at(-1)?.createdAt} />}
            </span>
            {running && (
              <>
                {' '}
                <NotifyButton />
              </>
            )}
          </p>
          {detail.forkedFrom && (
            <p className="small">
              Forked from{' '}
              <a
                href={`/sessions/${detail.forkedFrom}`}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(`/sessions/${detail.forkedFrom}`);
                }}
              >
                its parent session
              </a>
            </p>
          )}
          {detail.forks.length > 0 && (
            <div className="small">
              Forks:{' '}
              <ul className="forks">
                {detail.forks.map((fork) => (
                  <li key={fork.id}>
                    <a
                      href={`/sessions/${fork.id}`}
                      onClick={(event) => {
                        event.preventDefault();
                        navigate(`/sessions/${fork.id}`);
                      }}
                    >
                      {fork.title}
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {detail.error && <p className="error">{detail.error.message}</p>}
          <div className="actions">
            {running && (
              <button type="button" disabled={!online} onClick={() => void act(() => api.stop(sessionId))}>
                Stop
              </button>
            )}
            {['interrupted', 'failed'].includes(detail.status) && (
              <button type="button" disabled={!online} onClick={() => void act(() => api.resume(sessionId))}>
                Resume
              </button>
            )}
            {narrow ? (
              // On a phone the rest folds into one menu: the report starts on the first screen.
              <details className="menu actions-menu">
                <summary>Actions</summary>
                {secondary}
              </details>
            ) : (
              secondary
            )}
          </div>
          {actionError && (
            <p className="error action-error" role="alert">
              {actionError}{' '}
              <button type="button" className="link" onClick={() => setActionError(null)}>
                Dismiss
              </button>
            </p>
          )}
          {error && (
            <p className="error" role="alert">
              Could not read the session again: {error}
            </p>
          )}
        </header>
        {detail.pendingInput && detail.status === 'waiting' && (
          <OutlineReview sessionId={sessionId} pending={detail.pendingInput} onAnswered={load} />
        )}
        <div role="tablist" className="tabs" aria-label="Session views">
          {tabs.map((name) => (
            <button
              type="button"
              key={name}
              id={`tab-${name}`}
              role="tab"
              ref={(element) => {
                tabRefs.current[name] = element;
              }}
              aria-selected={shown === name}
              aria-controls={`panel-${name}`}
              tabIndex={shown === name ? 0 : -1}
              onClick={() => setTab(name)}
              onKeyDown={onTabKey}
            >
              {tabNames[name]}
            </button>
          ))}
        </div>
        <section role="tabpanel" id={`panel-${shown}`} aria-labelledby={`tab-${shown}`}>
          {shown === 'report' && (
            <>
              <Report
                detail={detail}
                onCite={({ number, version }) => setCitation({ number, of: { version } })}
                onShown={setShownVersion}
              />
              <Conversation
                sessionId={sessionId}
                messages={conversation}
                hasReport={detail.report.latest !== null}
                canAsk={!running && detail.status !== 'waiting' && detail.report.latest !== null}
                online={online}
                onSent={load}
                onCite={(number, answer) => setCitation({ number, of: { answer } })}
              />
            </>
          )}
          {shown === 'progress' && (
            <ResearchProgress detail={detail} events={stepEvents} onShowJournal={() => setTab('journal')} />
          )}
          {shown === 'sources' && <Sources sources={detail.sources} />}
          {shown === 'journal' && (
            <>
              <Timeline events={stepEvents} />
              <h3>Prompts</h3>
              <Prompts sessionId={sessionId} version={detail.runs.length} />
            </>
          )}
        </section>
      </div>
      {citation && (
        <CitationPanel
          sessionId={sessionId}
          number={citation.number}
          of={citation.of}
          onClose={() => setCitation(null)}
        />
      )}
      {picker && (
        <StepPicker
          sessionId={sessionId}
          action={picker}
          onClose={() => setPicker(null)}
          onChoose={(from) => {
            setPicker(null);
            if (picker === 'resume') void act(() => api.resume(sessionId, { from }));
            else void act(async () => navigate(`/sessions/${(await api.fork(sessionId, from)).id}`));
          }}
        />
      )}
    </div>
  );
}

/** How long the current run has been going, ticking every second (the server's start, this clock). */
function Elapsed({ since }: { since: string | undefined }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  if (!since) return null;
  const seconds = Math.max(0, Math.round((now - Date.parse(since)) / 1_000));
  const text = seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return <span className="elapsed"> · running for {text}</span>;
}

/** Asks once for the browser's permission to say when a run finishes (shown while one runs). */
function NotifyButton() {
  const [permission, setPermission] = useState(() =>
    typeof Notification === 'undefined' ? 'denied' : Notification.permission,
  );
  if (permission !== 'default') return null;
  return (
    <button
      type="button"
      className="link small"
      onClick={() => void Notification.requestPermission().then(setPermission)}
    >
      Notify me when it finishes
    </button>
  );
}

/**
 * When a run this page watched ends (completed, failed, waiting for a review) while the tab is in the
 * background: what the tab's title should say until the person comes back to it (null otherwise).
 */
function useFinishNotice(detail: SessionDetail | null): string | null {
  const previous = useRef<{ id: string; status: string } | null>(null);
  const [unseen, setUnseen] = useState<string | null>(null);
  useEffect(() => {
    if (!detail) return;
    const before = previous.current;
    previous.current = { id: detail.id, status: detail.status };
    if (before?.id !== detail.id) setUnseen(null);
    const wasRunning = before?.id === detail.id && (before.status === 'running' || before.status === 'queued');
    const ended = detail.status === 'completed' || detail.status === 'failed' || detail.status === 'waiting';
    if (!wasRunning || !ended || !document.hidden) return;
    const what =
      detail.status === 'completed' ? 'finished' : detail.status === 'waiting' ? 'waits for your review' : 'failed';
    // The notification itself comes from the app, whichever page is open (useFinishNotifications).
    setUnseen(what);
  }, [detail]);
  useEffect(() => {
    if (!unseen) return;
    const seen = () => !document.hidden && setUnseen(null);
    document.addEventListener('visibilitychange', seen);
    return () => document.removeEventListener('visibilitychange', seen);
  }, [unseen]);
  return unseen;
}

function isRunning(detail: SessionDetail): boolean {
  return detail.status === 'running' || detail.status === 'queued';
}

/** The tab on screen: the one the person picked; until then the report once there is one, the progress before. */
function shownTab(picked: Tab | null, detail: SessionDetail): Tab {
  return picked ?? (detail.report.versions.length > 0 && !isRunning(detail) ? 'report' : 'progress');
}
