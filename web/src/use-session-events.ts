import { useEffect, useState } from 'react';
import { eventTypes, type WireEvent } from '../../src/shared/events.ts';
import { announceConnection, api } from './api-client.ts';

export type LiveEvent = WireEvent;

/**
 * A session's events: the full history, then live. EventSource reconnects by itself after a drop
 * and sends Last-Event-ID, so the server replays exactly what was missed; every event type the
 * server knows is listened to, from the one list both share.
 */
export function useSessionEvents(sessionId: string): { events: LiveEvent[]; connected: boolean } {
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    setEvents([]);
    const source = new EventSource(api.eventsUrl(sessionId));
    const seen = new Set<number>();
    const onEvent = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as LiveEvent;
      if (seen.has(event.offset)) return;
      seen.add(event.offset);
      setEvents((current) => [...current, event]);
    };
    for (const type of eventTypes) source.addEventListener(type, onEvent as EventListener);
    source.onopen = () => {
      setConnected(true);
      announceConnection(true);
    };
    source.onerror = () => {
      setConnected(false);
      // Closed for good (a 401 or 404 answer): not a connection problem, and not retried.
      if (source.readyState !== EventSource.CLOSED) announceConnection(false);
    };
    return () => source.close();
  }, [sessionId]);
  return { events, connected };
}
