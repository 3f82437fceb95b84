import { useEffect, useState } from 'react';
import { announceConnection } from './api-client.ts';

/** How often, while the server cannot be reached, the page asks again (seconds). */
const RETRY_SECONDS = 5;

export interface Connection {
  online: boolean;
  /** Seconds until the next try while offline. */
  retryIn: number;
}

/**
 * Whether the server can be reached, as every request and live stream reports it. While it cannot,
 * the page asks `/healthz` every few seconds, so it notices the server's return even when nothing
 * else is asking; the live streams reconnect by themselves and catch up on what they missed.
 */
export function useConnection(): Connection {
  const [online, setOnline] = useState(true);
  const [retryIn, setRetryIn] = useState(RETRY_SECONDS);
  useEffect(() => {
    const onChange = (event: Event) => setOnline((event as CustomEvent<{ online: boolean }>).detail.online);
    window.addEventListener('quarry:connection', onChange);
    return () => window.removeEventListener('quarry:connection', onChange);
  }, []);
  useEffect(() => {
    if (online) return;
    setRetryIn(RETRY_SECONDS);
    let left = RETRY_SECONDS;
    const timer = setInterval(() => {
      left -= 1;
      if (left > 0) return setRetryIn(left);
      left = RETRY_SECONDS;
      setRetryIn(left);
      fetch('/healthz', { cache: 'no-store' }).then(
        () => announceConnection(true),
        () => announceConnection(false),
      );
    }, 1000);
    return () => clearInterval(timer);
  }, [online]);
  return { online, retryIn };
}
