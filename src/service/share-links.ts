import { createHash, randomBytes } from 'node:crypto';
import { ownerStore } from '../store/owner-store.ts';
import type { Store } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';
import { type ExportedFile, exportFrom } from './session-export.ts';

/**
 * Read-only share links: `/share/<token>` shows a session's report (the HTML export: no script,
 * nothing loaded from any host) to anyone holding the link, without signing in. One link per
 * session; the store keeps only its token's hash, so the link is shown once, when it is made.
 */
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export interface ShareLink {
  /** The path to open on the server (`/share/<token>`); only ever shown when the link is made. */
  path: string;
  token: string;
  sharedAt: number;
}

/** Makes a new share link for the session; a link it had before stops working. */
export async function shareSession(context: ServiceContext, sessionId: string): Promise<ShareLink> {
  const token = `qsh_${randomBytes(24).toString('base64url')}`;
  const sharedAt = (await context.store.setShareLink(sessionId, hashOf(token)))!;
  return { path: `/share/${token}`, token, sharedAt };
}

/** Stops sharing: the session's link stops working at once. */
export async function stopSharing(context: ServiceContext, sessionId: string): Promise<void> {
  await context.store.setShareLink(sessionId, null);
}

/** When the session's current link was made, or null when it is not shared. */
export function sharedSince(context: ServiceContext, sessionId: string): Promise<number | null> {
  return context.store.shareLinkOf(sessionId);
}

/**
 * The shared report as a page (the latest version, or the one asked for), or null when no session
 * is shared under this token.
 */
export async function sharedReport(store: Store, token: string, version?: number): Promise<ExportedFile | null> {
  if (!/^qsh_[\w-]{32}$/.test(token)) return null;
  const shared = await store.findSharedSession(hashOf(token));
  if (!shared) return null;
  return exportFrom(ownerStore(store, shared.ownerId), {
    sessionId: shared.sessionId,
    format: 'html',
    version,
    reader: true,
  });
}
