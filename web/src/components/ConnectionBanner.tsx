import { useEffect, useState } from 'react';
import type { Connection } from '../use-connection.ts';

/** One banner for a lost connection, with when the next try is; a short note once it is back. */
export function ConnectionBanner({ connection }: { connection: Connection }) {
  const [recovered, setRecovered] = useState(false);
  const [wasOffline, setWasOffline] = useState(false);
  useEffect(() => {
    if (!connection.online) {
      setWasOffline(true);
      setRecovered(false);
    } else if (wasOffline) {
      setWasOffline(false);
      setRecovered(true);
    }
  }, [connection.online, wasOffline]);
  // Its own effect: clearing "was offline" above re-runs that one, which must not cancel the timer.
  useEffect(() => {
    if (!recovered) return;
    const timer = setTimeout(() => setRecovered(false), 3000);
    return () => clearTimeout(timer);
  }, [recovered]);
  if (!connection.online)
    return (
      <div className="banner offline" role="status">
        The server does not answer. Nothing recorded is lost: research it was running goes on if the server is up and
        only the connection dropped, and continues from its last step once the server runs again. This page catches up
        when it is back; trying again in {connection.retryIn} s…
      </div>
    );
  if (recovered)
    return (
      <div className="banner online" role="status">
        Connected again.
      </div>
    );
  return null;
}
