import type { SessionPage, SessionStatus } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';

export interface ListSessionsRequest {
  status?: SessionStatus[];
  search?: string;
  limit?: number;
  cursor?: string;
}

/** The acting user's sessions, newest update first; reads session rows only. */
export function listSessions(context: ServiceContext, request: ListSessionsRequest = {}): Promise<SessionPage> {
  return context.store.listSessions(request);
}
