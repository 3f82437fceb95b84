/**
 * The HTTP API as the UI uses it, typed by the server's own wire schemas. Errors carry the API's
 * code and message. Two things are announced to the whole app as window events, so every screen
 * reacts the same way: a 401 (`quarry:unauthorized`: back to the sign-in page) and whether the
 * server can be reached (`quarry:connection` with `{ online }`).
 */

import type {
  CapabilitiesWire,
  CitationWire,
  LibraryDocumentWire,
  MessageWire,
  ReportWire,
  SessionDetailWire,
  SessionSummaryWire,
  SourceWire,
  StepWire,
} from '../../src/server/wire.ts';

export type SessionSummary = SessionSummaryWire;
export type SessionDetail = SessionDetailWire;
export type Source = SourceWire;
export type Message = MessageWire;
export type Step = StepWire;
export type Capabilities = CapabilitiesWire;
export type Citation = CitationWire;
export type LibraryDocument = LibraryDocumentWire;

export interface Who {
  user: { id: string; name: string } | null;
  auth: 'local' | 'tokens';
  /** Sessions of the server's local user (made before it had users), which no one signed in sees. */
  localSessions?: number;
}

/** The text a citation number belongs to: a report version, or an answer (its message id). */
export interface CitedIn {
  version?: number;
  answer?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Tells the app whether the server answered (any answer, even an error, means it is reachable). */
export function announceConnection(online: boolean): void {
  window.dispatchEvent(new CustomEvent('quarry:connection', { detail: { online } }));
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      ...init,
      credentials: 'same-origin',
      headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    });
  } catch {
    announceConnection(false);
    throw new ApiError(0, 'OFFLINE', 'The server cannot be reached; retrying…');
  }
  announceConnection(true);
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (response.status === 401 && !path.startsWith('/api/auth/session'))
    window.dispatchEvent(new CustomEvent('quarry:unauthorized'));
  if (!response.ok)
    throw new ApiError(
      response.status,
      body?.error?.code ?? 'HTTP_ERROR',
      body?.error?.message ?? `The server answered ${response.status}.`,
    );
  return body as T;
}

/**
 * Adds one file to the signed-in user's library (multipart, so the browser streams it), telling
 * `onProgress` how much is sent (0 to 1). XMLHttpRequest, because fetch says nothing of an upload's progress.
 */
function uploadDocument(file: File, onProgress: (sent: number) => void): Promise<LibraryDocument> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/documents');
    xhr.withCredentials = true;
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onerror = () => {
      announceConnection(false);
      reject(new ApiError(0, 'OFFLINE', 'The server cannot be reached; try again.'));
    };
    xhr.onload = () => {
      announceConnection(true);
      let body: { documents?: LibraryDocument[]; error?: { code: string; message: string } } | null = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // answered below
      }
      if (xhr.status === 401) window.dispatchEvent(new CustomEvent('quarry:unauthorized'));
      if (xhr.status === 201 && body?.documents?.[0]) resolve(body.documents[0]);
      else
        reject(
          new ApiError(
            xhr.status,
            body?.error?.code ?? 'HTTP_ERROR',
            body?.error?.message ?? `The server answered ${xhr.status}.`,
          ),
        );
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

const json = (value: unknown) => JSON.stringify(value);
const sessionPath = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;

export const api = {
  me: () => request<Who>('/api/auth/me'),
  signIn: (token: string) => request<Who>('/api/auth/session', { method: 'POST', body: json({ token }) }),
  signOut: () => request<void>('/api/auth/session', { method: 'DELETE' }),
  capabilities: () => request<Capabilities>('/api/capabilities'),
  /** The signed-in user's library, newest first. */
  documents: () => request<{ documents: LibraryDocument[] }>('/api/documents'),
  uploadDocument,
  removeDocument: (id: string) => request<void>(`/api/documents/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  listSessions: (options: { q?: string; cursor?: string | null; limit?: number } = {}) => {
    const params = new URLSearchParams();
    if (options.q) params.set('q', options.q);
    if (options.cursor) params.set('cursor', options.cursor);
    params.set('limit', String(options.limit ?? 50));
    return request<{ sessions: SessionSummary[]; nextCursor: string | null }>(`/api/sessions?${params}`);
  },
  createSession: (body: { question: string; settings?: Record<string, unknown>; docs?: string[]; search?: string[] }) =>
    request<SessionSummary>('/api/sessions', { method: 'POST', body: json(body) }),
  getSession: (id: string) => request<SessionDetail>(sessionPath(id)),
  /** A session file's text (quarry export --format json, or a legacy per-session file), sent as it is. */
  importSession: (fileText: string) =>
    request<SessionSummary>('/api/sessions/import', { method: 'POST', body: fileText }),
  rename: (id: string, title: string) =>
    request<SessionSummary>(sessionPath(id), { method: 'PATCH', body: json({ title }) }),
  /** Deletes a session; `force` stops it first when it is running (else 409 SESSION_ALREADY_RUNNING). */
  remove: (id: string, options: { force?: boolean } = {}) =>
    request<void>(`${sessionPath(id)}${options.force ? '?force=true' : ''}`, { method: 'DELETE' }),
  stop: (id: string) => request<{ result: string }>(`${sessionPath(id)}/stop`, { method: 'POST' }),
  resume: (id: string, options: { from?: string; force?: boolean } = {}) =>
    request<SessionSummary>(`${sessionPath(id)}/resume`, { method: 'POST', body: json(options) }),
  fork: (id: string, from: string) =>
    request<SessionSummary>(`${sessionPath(id)}/fork`, { method: 'POST', body: json({ from, run: true }) }),
  send: (id: string, content: string) =>
    request<{ kind: string }>(`${sessionPath(id)}/messages`, { method: 'POST', body: json({ role: 'user', content }) }),
  /** The journal across runs; `include: 'inputs'` adds each step's input (a query, a URL). */
  steps: (id: string, options: { include?: 'inputs' } = {}) =>
    request<{ steps: Step[] }>(`${sessionPath(id)}/steps${options.include ? `?include=${options.include}` : ''}`),
  step: (id: string, runId: string, key: string) =>
    request<Step>(`${sessionPath(id)}/steps/${encodeURIComponent(runId)}/${encodeURIComponent(key)}`),
  /** A report version's text (a session's detail carries only the latest). */
  report: (id: string, version: number) => request<ReportWire>(`${sessionPath(id)}/reports/${version}`),
  /** What `[n]` of a text points to: a report version's (the latest by default), or an answer's. */
  citation: (id: string, number: number, of: CitedIn = {}) =>
    request<Citation>(
      `${sessionPath(id)}/citations/${number}${
        of.answer ? `?answer=${encodeURIComponent(of.answer)}` : of.version ? `?version=${of.version}` : ''
      }`,
    ),
  shareState: (id: string) => request<{ shared: boolean; sharedAt: string | null }>(`${sessionPath(id)}/share`),
  share: (id: string) =>
    request<{ url: string; path: string; sharedAt: string }>(`${sessionPath(id)}/share`, { method: 'POST' }),
  unshare: (id: string) => request<void>(`${sessionPath(id)}/share`, { method: 'DELETE' }),
  exportUrl: (id: string, format: 'md' | 'html' | 'pdf' | 'json', version?: number) =>
    `${sessionPath(id)}/export?format=${format}${version ? `&version=${version}` : ''}`,
  /** The browser's one live stream: the feed, and these sessions' events from these offsets. */
  liveUrl: (watched: ReadonlyMap<string, number>) =>
    `/api/sessions/live?watch=${encodeURIComponent([...watched].map(([id, after]) => `${id}:${after}`).join(','))}`,
};
