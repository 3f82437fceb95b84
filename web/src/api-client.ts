/**
 * The HTTP API as the UI uses it, typed by the server's own wire schemas. Errors carry the API's
 * code and message. Two things are announced to the whole app as window events, so every screen
 * reacts the same way: a 401 (`quarry:unauthorized`: back to the sign-in page) and whether the
 * server can be reached (`quarry:connection` with `{ online }`).
 */

import { type ClientResponse, hc } from 'hono/client';
import type { ResponseFormat } from 'hono/types';
import type { SuccessStatusCode } from 'hono/utils/http-status';
import type { QuarryApp, QuarrySignIn } from '../../src/server/app.ts';
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

/**
 * The server's routes as Hono's typed client sees them: a path, a parameter or a body that drifts
 * from the server's route schemas is a compile error here, and each answer is typed by its route.
 */
const origin = typeof window === 'undefined' ? 'http://localhost' : window.location.origin;
const client = hc<QuarryApp>(origin, { init: { credentials: 'same-origin' } });
/** Signing in and out, which the server routes before it asks who is signed in. */
const signing = hc<QuarrySignIn>(`${origin}/api/auth`, { init: { credentials: 'same-origin' } });

/** What a route answers when it succeeds (204 answers nothing). */
type Success<R> =
  R extends ClientResponse<infer T, infer S, infer _F> ? (S extends SuccessStatusCode ? T : never) : never;

/**
 * Sends one request of the typed client and answers its success body; a failure to connect, a 401
 * (outside signing in) and an error answer are announced or thrown as `ApiError`.
 */
async function call<R extends ClientResponse<unknown, number, ResponseFormat>>(
  send: () => Promise<R>,
  options: { signingIn?: boolean } = {},
): Promise<Success<R>> {
  let response: R;
  try {
    response = await send();
  } catch {
    announceConnection(false);
    throw new ApiError(0, 'OFFLINE', 'The server cannot be reached; retrying…');
  }
  announceConnection(true);
  if (response.status === 204) return undefined as Success<R>;
  const body = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (response.status === 401 && !options.signingIn) window.dispatchEvent(new CustomEvent('quarry:unauthorized'));
  if (!response.ok)
    throw new ApiError(
      response.status,
      body?.error?.code ?? 'HTTP_ERROR',
      body?.error?.message ?? `The server answered ${response.status}.`,
    );
  return body as Success<R>;
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

const sessions = client.api.sessions;
const session = sessions[':id'];

export const api = {
  me: () => call(() => client.api.auth.me.$get()),
  signIn: (token: string) => call(() => signing.session.$post({ json: { token } }), { signingIn: true }),
  signOut: () => call(() => signing.session.$delete(), { signingIn: true }),
  capabilities: () => call(() => client.api.capabilities.$get()),
  /** The signed-in user's library, newest first. */
  documents: () => call(() => client.api.documents.$get()),
  uploadDocument,
  removeDocument: (id: string) => call(() => client.api.documents[':id'].$delete({ param: { id } })),
  listSessions: (options: { q?: string; cursor?: string | null; limit?: number } = {}) =>
    call(() =>
      sessions.$get({
        query: {
          ...(options.q ? { q: options.q } : {}),
          ...(options.cursor ? { cursor: options.cursor } : {}),
          limit: String(options.limit ?? 50),
        },
      }),
    ),
  createSession: (json: { question: string; settings?: Record<string, unknown>; docs?: string[]; search?: string[] }) =>
    call(() => sessions.$post({ json })),
  getSession: (id: string) => call(() => session.$get({ param: { id } })),
  /** A session file's text (quarry export --format json, or a legacy per-session file), sent as it is. */
  importSession: (fileText: string) => call(() => sessions.import.$post({ json: {} }, { init: { body: fileText } })),
  rename: (id: string, title: string) => call(() => session.$patch({ param: { id }, json: { title } })),
  /** Deletes a session; `force` stops it first when it is running (else 409 SESSION_ALREADY_RUNNING). */
  remove: (id: string, options: { force?: boolean } = {}) =>
    call(() => session.$delete({ param: { id }, query: options.force ? { force: 'true' } : {} })),
  stop: (id: string) => call(() => session.stop.$post({ param: { id } })),
  resume: (id: string, options: { from?: string; force?: boolean } = {}) =>
    call(() => session.resume.$post({ param: { id }, json: options })),
  fork: (id: string, from: string) => call(() => session.fork.$post({ param: { id }, json: { from, run: true } })),
  send: (id: string, content: string) =>
    call(() => session.messages.$post({ param: { id }, json: { role: 'user', content } })),
  /** The journal across runs; `include: 'inputs'` adds each step's input (a query, a URL). */
  steps: (id: string, options: { include?: 'inputs' } = {}) =>
    call(() => session.steps.$get({ param: { id }, query: options.include ? { include: options.include } : {} })),
  step: (id: string, runId: string, key: string) =>
    call(() => session.steps[':runId'][':key'].$get({ param: { id, runId, key } })),
  /** A report version's text (a session's detail carries only the latest). */
  report: (id: string, version: number) =>
    call(() => session.reports[':version'].$get({ param: { id, version: String(version) } })),
  /** What `[n]` of a text points to: a report version's (the latest by default), or an answer's. */
  citation: (id: string, number: number, of: CitedIn = {}) =>
    call(() =>
      session.citations[':number'].$get({
        param: { id, number: String(number) },
        query: of.answer ? { answer: of.answer } : of.version ? { version: String(of.version) } : {},
      }),
    ),
  shareState: (id: string) => call(() => session.share.$get({ param: { id } })),
  share: (id: string) => call(() => session.share.$post({ param: { id } })),
  unshare: (id: string) => call(() => session.share.$delete({ param: { id } })),
  exportUrl: (id: string, format: 'md' | 'html' | 'pdf' | 'json', version?: number) =>
    session.export.$url({ param: { id }, query: { format, ...(version ? { version: String(version) } : {}) } }).href,
  /** The browser's one live stream: the feed, and these sessions' events from these offsets. */
  liveUrl: (watched: ReadonlyMap<string, number>) =>
    sessions.live.$url({ query: { watch: [...watched].map(([id, after]) => `${id}:${after}`).join(',') } }).href,
};

/** Who is signed in, as the server says (`GET /api/auth/me`). */
export type Who = Awaited<ReturnType<typeof api.me>>;
