import { useCallback, useEffect, useState } from 'react';
import { ApiError, api, type Who } from './api-client.ts';
import { ConnectionBanner } from './components/ConnectionBanner.tsx';
import { LocalSessionsNotice } from './components/LocalSessionsNotice.tsx';
import { NewResearch } from './components/NewResearch.tsx';
import { SessionPage } from './components/SessionPage.tsx';
import { Sidebar } from './components/Sidebar.tsx';
import { SignIn } from './components/SignIn.tsx';
import { ThemeToggle } from './components/ThemeToggle.tsx';
import { useConnection } from './use-connection.ts';
import { useFinishNotifications } from './use-finish-notifications.ts';

/** `/` is new research; `/sessions/:id` a session (so reloads and shared links work). */
function sessionFromPath(path: string): string | null {
  return /^\/sessions\/([A-Za-z0-9_-]+)/.exec(path)?.[1] ?? null;
}

/**
 * Who is asking decides what shows: on a server with users, the sign-in page until a token is
 * accepted (and again whenever the server answers 401); on a loopback server without users, the app
 * at once. The sidebar is a drawer on small screens.
 */
export function App() {
  const [who, setWho] = useState<Who | 'signed-out' | null>(null);
  const [path, setPath] = useState(window.location.pathname);
  const [drawer, setDrawer] = useState(false);
  const connection = useConnection();

  const checkWho = useCallback(() => {
    api.me().then(setWho, (error: unknown) => {
      if (error instanceof ApiError && error.status === 401) setWho('signed-out');
      else setTimeout(checkWho, 3000);
    });
  }, []);
  useEffect(checkWho, [checkWho]);
  // Escape closes what is open over the page: the sessions drawer and any menu.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setDrawer(false);
      for (const menu of document.querySelectorAll<HTMLDetailsElement>('details.menu[open]')) {
        menu.open = false;
        menu.querySelector('summary')?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    const onUnauthorized = () => setWho('signed-out');
    const onPop = () => setPath(window.location.pathname);
    window.addEventListener('quarry:unauthorized', onUnauthorized);
    window.addEventListener('popstate', onPop);
    return () => {
      window.removeEventListener('quarry:unauthorized', onUnauthorized);
      window.removeEventListener('popstate', onPop);
    };
  }, []);

  const navigate = useCallback((to: string) => {
    window.history.pushState(null, '', to);
    setPath(to);
    setDrawer(false);
  }, []);

  async function signOut() {
    await api.signOut().catch(() => undefined);
    setWho('signed-out');
  }

  const sessionId = sessionFromPath(path);
  useFinishNotifications(who !== null && who !== 'signed-out' ? sessionId : null);
  if (who === null) return <p className="muted centered">Loading…</p>;
  if (who === 'signed-out') return <SignIn onSignedIn={setWho} />;
  // A session's page names itself (SessionPage); the rest say where the reader is.
  if (!sessionId) document.title = 'New research · Quarry';
  return (
    <div className={['layout', drawer && 'drawer-open', !connection.online && 'offline'].filter(Boolean).join(' ')}>
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      {sessionId && (
        // Past the sessions list and the report's every citation: two Tab presses from the top.
        <a className="skip-link" href="#follow-up">
          Skip to the follow-up question
        </a>
      )}
      <header className="topbar">
        <button
          type="button"
          className="drawer-toggle"
          aria-expanded={drawer}
          aria-controls="sessions"
          onClick={() => setDrawer((open) => !open)}
        >
          Sessions
        </button>
        <a
          className="brand"
          href="/"
          onClick={(event) => {
            event.preventDefault();
            navigate('/');
          }}
        >
          Quarry
        </a>
        <span className="spacer" />
        <ThemeToggle />
        {who.auth === 'tokens' && (
          <span className="who">
            <span className="muted small">{who.user?.name}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </span>
        )}
      </header>
      <ConnectionBanner connection={connection} />
      <Sidebar current={sessionId} navigate={navigate} />
      {drawer && (
        <button type="button" className="scrim" aria-label="Close sessions" onClick={() => setDrawer(false)} />
      )}
      <main className="main" id="content" tabIndex={-1}>
        <LocalSessionsNotice who={who} />
        {sessionId ? (
          <SessionPage key={sessionId} sessionId={sessionId} navigate={navigate} online={connection.online} />
        ) : (
          <NewResearch navigate={navigate} online={connection.online} />
        )}
      </main>
    </div>
  );
}
