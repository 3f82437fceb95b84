import { useCallback, useRef } from 'react';
import type { SessionFeedChange } from './use-session-feed.ts';
import { useSessionFeed } from './use-session-feed.ts';

const ENDED: Record<string, string> = {
  completed: 'finished',
  waiting: 'waits for your review',
  failed: 'failed',
};

/**
 * With the browser's permission, says when any of the user's runs ends (finished, failed, waiting
 * for a review), from whichever page of the app is open: the session feed tells every change. Not
 * for the session on screen while the tab is in view (the page shows it). A notification is tagged
 * with its session, so the tabs of one browser that all saw the change show it once.
 */
export function useFinishNotifications(shownSessionId: string | null): void {
  // What each session was last seen doing: only a run seen going on is said to end.
  const statuses = useRef(new Map<string, string>());
  const shown = useRef(shownSessionId);
  shown.current = shownSessionId;
  const onChange = useCallback((change: SessionFeedChange) => {
    if (change.type !== 'session') return;
    const { id, status, title } = change.session;
    const before = statuses.current.get(id);
    statuses.current.set(id, status);
    const what = ENDED[status];
    if (!what || (before !== 'running' && before !== 'queued')) return;
    if (id === shown.current && !document.hidden) return;
    if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
    new Notification(`Research ${what}`, { body: title, tag: `quarry-${id}-${status}` });
  }, []);
  useSessionFeed(onChange);
}
