import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type SessionDetail } from '../api-client.ts';
import { useSessionEvents } from '../use-session-events.ts';
import { Conversation } from './Conversation.tsx';
import { OutlineReview } from './OutlineReview.tsx';
import { Prompts } from './Prompts.tsx';
import { Report } from './Report.tsx';
import { Sources } from './Sources.tsx';
import { Timeline } from './Timeline.tsx';

const refreshOn = new Set([
  'run-start',
  'run-end',
  'run-error',
  'input-request',
  'input-receive',
  'source-found',
  'session-create',
]);

export function SessionPage({
  sessionId,
  navigate,
  onChange,
}: {
  sessionId: string;
  navigate: (path: string) => void;
  onChange: () => void;
}) {
  const [detail, setDetail] = useState<SessionDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tab, setTab] = useState<'progress' | 'report' | 'sources' | 'prompts' | 'conversation'>('progress');
  const { events, connected } = useSessionEvents(sessionId);
  const seen = useRef(0);

  const load = useCallback(() => {
    api.getSession(sessionId).then(
      (loaded) => {
        setDetail(loaded);
        setError(null);
      },
      (caught: Error) => setError(caught.message),
    );
  }, [sessionId]);

  useEffect(load, [load]);
  useEffect(() => {
    const fresh = events.slice(seen.current);
    seen.current = events.length;
    if (fresh.some((event) => refreshOn.has(event.type))) load();
    // A finished run shows its report, unless the person is reading another tab.
    if (fresh.some((event) => event.type === 'run-end' && event.data.status === 'completed'))
      setTab((current) => (current === 'progress' ? 'report' : current));
  }, [events, load]);

  async function act(action: () => Promise<unknown>) {
    setError(null);
    try {
      await action();
      load();
      onChange();
    } catch (caught) {
      setError((caught as Error).message);
    }
  }

  if (!detail)
    return error ? (
      <p className="error" role="alert">
        {error}
      </p>
    ) : (
      <p className="muted">Loading…</p>
    );
  const running = detail.status === 'running' || detail.status === 'queued';
  const lastRunStart = Math.max(
    0,
    events.findLastIndex((event) => event.type === 'run-start'),
  );
  const streaming = events
    .slice(lastRunStart)
    .filter((event) => event.type === 'report-delta')
    .map((event) => (event.type === 'report-delta' ? event.data.text : ''))
    .join('');

  return (
    <div className="session-page">
      <header>
        <input
          className="title"
          aria-label="Title"
          key={detail.title}
          defaultValue={detail.title}
          onBlur={(event) =>
            event.target.value.trim() &&
            event.target.value !== detail.title &&
            void act(() => api.rename(sessionId, event.target.value))
          }
          onKeyDown={(event) => event.key === 'Enter' && event.currentTarget.blur()}
        />
        <p>
          <span className={`badge ${detail.status}`}>{detail.status}</span>{' '}
          <span className="muted small">
            {detail.resumePoint.completedSteps}/{detail.resumePoint.knownSteps} steps ·{' '}
            {detail.resumePoint.lastCompletedPhase ?? 'starting'}
            {detail.resumePoint.nextStep ? ` · next: ${detail.resumePoint.nextStep}` : ''} ·{' '}
            {connected ? 'live' : 'reconnecting…'}
          </span>
        </p>
        {detail.error && <p className="error">{detail.error.message}</p>}
        <div className="actions">
          {running && (
            <button type="button" onClick={() => void act(() => api.stop(sessionId))}>
              Stop
            </button>
          )}
          {['interrupted', 'failed'].includes(detail.status) && (
            <button type="button" onClick={() => void act(() => api.resume(sessionId))}>
              Resume
            </button>
          )}
          {!running && (
            <button
              type="button"
              onClick={() => {
                const from = window.prompt(
                  'Resume from which phase or step? (plan, search, read, analyze, outline, write, verify, or a step key)',
                );
                if (from) void act(() => api.resume(sessionId, { from }));
              }}
            >
              Resume from…
            </button>
          )}
          <button
            type="button"
            onClick={() => {
              const from = window.prompt('Fork from which phase or step?');
              if (from) void act(async () => navigate(`/sessions/${(await api.fork(sessionId, from)).id}`));
            }}
          >
            Fork from…
          </button>
          <a className="button" href={api.exportUrl(sessionId, 'md')}>
            Markdown
          </a>
          <a className="button" href={api.exportUrl(sessionId, 'html')}>
            HTML
          </a>
          <a className="button" href={api.exportUrl(sessionId, 'json')}>
            JSON
          </a>
          <button
            type="button"
            className="danger"
            onClick={() =>
              window.confirm(`Delete "${detail.title}"?`) &&
              void act(async () => {
                await api.remove(sessionId);
                navigate('/');
              })
            }
          >
            Delete
          </button>
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
      </header>
      {detail.pendingInput && detail.status === 'waiting' && (
        <OutlineReview sessionId={sessionId} pending={detail.pendingInput} onAnswered={load} />
      )}
      <div role="tablist" className="tabs">
        {(['progress', 'report', 'sources', 'prompts', 'conversation'] as const).map((name) => (
          <button type="button" key={name} role="tab" aria-selected={tab === name} onClick={() => setTab(name)}>
            {name}
          </button>
        ))}
      </div>
      <section role="tabpanel">
        {tab === 'progress' && <Timeline events={events} />}
        {tab === 'report' && <Report detail={detail} streaming={streaming} />}
        {tab === 'sources' && <Sources sources={detail.sources} />}
        {tab === 'prompts' && <Prompts sessionId={sessionId} version={detail.runs.length} />}
        {tab === 'conversation' && (
          <Conversation sessionId={sessionId} messages={detail.messages} canAsk={!running} onSent={load} />
        )}
      </section>
    </div>
  );
}
