import { useEffect, useState } from 'react';
import type { WireEvent } from '../../src/shared/events.ts';
import { liveHub } from './live-hub.ts';

export type LiveEvent = WireEvent;

/**
 * A session's events: the full history, then live, through the browser's one live stream (shared
 * by its tabs). After a drop the stream opens again from the offsets the tabs have, so what was
 * missed is replayed; an event seen twice is kept once.
 */
export function useSessionEvents(sessionId: string): { events: LiveEvent[]; connected: boolean } {
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    setEvents([]);
    const seen = new Set<number>();
    const hub = liveHub();
    const stopEvents = hub.followSession(sessionId, (event) => {
      if (seen.has(event.offset)) return;
      seen.add(event.offset);
      setEvents((current) => [...current, event]);
    });
    const stopConnection = hub.followConnection(setConnected);
    return () => {
      stopEvents();
      stopConnection();
    };
  }, [sessionId]);
  return { events, connected };
}
