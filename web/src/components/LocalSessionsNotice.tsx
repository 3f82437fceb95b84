import { useState } from 'react';
import type { Who } from '../api-client.ts';

const DISMISSED = 'quarry.localSessionsNoticeDismissed';

/**
 * Says where a server's earlier sessions went once it has users: they belong to the local user (made
 * before sign-in was required) and no one signed in sees them until the operator hands them over.
 * Shown to a signed-in reader until dismissed; never a silently empty list.
 */
export function LocalSessionsNotice({ who }: { who: Who }) {
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(DISMISSED) === String(who.localSessions));
  if (who.auth !== 'tokens' || !who.localSessions || dismissed) return null;
  const count = who.localSessions;
  return (
    <section className="banner local-sessions" aria-label="Earlier sessions">
      <p>
        {count} earlier session{count === 1 ? ' was' : 's were'} made on this server before it had accounts. They belong
        to the server's local user, so they are not in your list. The operator can hand them to you with{' '}
        <code>quarry users adopt {who.user?.name ?? '<your name>'}</code>.
      </p>
      <button
        type="button"
        onClick={() => {
          localStorage.setItem(DISMISSED, String(count));
          setDismissed(true);
        }}
      >
        Dismiss
      </button>
    </section>
  );
}
