import { useEffect } from 'react';
import { announceConnection, api, type SessionSummary } from './api-client.ts';

export type SessionFeedChange =
  | { type: 'session'; session: SessionSummary }
  | { type: 'session-delete'; id: string }
  /** The feed is back after a drop: what changed meanwhile was not pushed; look again. */
  | { type: 'reconnect' };

/**
 * The user's sessions as they change, pushed by the server (new, renamed, moving on, finished,
 * deleted): the sidebar applies each change to what it has loaded instead of reloading its list.
 */
export function useSessionFeed(onChange: (change: SessionFeedChange) => void): void {
  useEffect(() => {
    const source = new EventSource(api.feedUrl());
    source.addEventListener('session', (message) =>
      onChange({ type: 'session', session: JSON.parse((message as MessageEvent<string>).data) as SessionSummary }),
    );
    source.addEventListener('session-delete', (message) =>
      onChange({
        type: 'session-delete',
        id: (JSON.parse((message as MessageEvent<string>).data) as { id: string }).id,
      }),
    );
    let dropped = false;
    source.onopen = () => {
      announceConnection(true);
      if (dropped) onChange({ type: 'reconnect' });
      dropped = false;
    };
    source.onerror = () => {
      dropped = true;
      if (source.readyState !== EventSource.CLOSED) announceConnection(false);
    };
    return () => source.close();
  }, [onChange]);
}
