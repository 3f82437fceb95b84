import { useEffect } from 'react';
import { type FeedChange, liveHub } from './live-hub.ts';

export type SessionFeedChange = FeedChange;

/**
 * The user's sessions as they change, pushed by the server (new, renamed, moving on, finished,
 * deleted) on the browser's one live stream: the sidebar applies each change to what it has loaded
 * instead of reloading its list.
 */
export function useSessionFeed(onChange: (change: SessionFeedChange) => void): void {
  useEffect(() => liveHub().followFeed(onChange), [onChange]);
}
