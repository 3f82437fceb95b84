import { useEffect, useState } from 'react';
import { api } from './api-client.ts';

export interface LiveEvent {
  offset: number;
  type: string;
  data: Record<string, unknown>;
  createdAt: string;
}

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
    const types = ['run-start', 'phase-start', 'step-start', 'step-end', 'source-found', 'report-delta', 'input-request', 'input-receive', 'claim-flag', 'run-end', 'run-error', 'run-rewind', 'session-create', 'session-fork', 'session-import'];
    for (const type of types) source.addEventListener(type, onEvent as EventListener);
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(false);
    return () => source.close();
  }, [sessionId]);
  return { events, connected };
}
