import { useCallback, useEffect, useState } from 'react';
import { NewResearch } from './components/NewResearch.tsx';
import { SessionPage } from './components/SessionPage.tsx';
import { Sidebar } from './components/Sidebar.tsx';

/** `/` is new research; `/sessions/:id` a session (so reloads and shared links work). */
function sessionFromPath(path: string): string | null {
  return /^\/sessions\/([A-Za-z0-9_-]+)/.exec(path)?.[1] ?? null;
}

export function App() {
  const [path, setPath] = useState(window.location.pathname);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    const onPop = () => setPath(window.location.pathname);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback((to: string) => {
    window.history.pushState(null, '', to);
    setPath(to);
  }, []);
  const changed = useCallback(() => setRefresh((value) => value + 1), []);
  const sessionId = sessionFromPath(path);
  return (
    <div className="layout">
      <Sidebar current={sessionId} navigate={navigate} refresh={refresh} onChange={changed} />
      <main className="main">
        {sessionId ? (
          <SessionPage key={sessionId} sessionId={sessionId} navigate={navigate} onChange={changed} />
        ) : (
          <NewResearch navigate={navigate} onCreated={changed} />
        )}
      </main>
    </div>
  );
}
