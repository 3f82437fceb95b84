import { useEffect, useState } from 'react';
import { eventTypes, type WireEvent } from '../../src/shared/events.ts';
import { api } from './api-client.ts';

export type LiveEvent = WireEvent;

/**
 * A session's events: the full history, then live. EventSource reconnects by itself after a drop
 * and sends Last-Event-ID, so the server replays exactly what was missed.
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
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(false);
    return () => source.close();
  }, [sessionId]);
  return { events, connected };
}
