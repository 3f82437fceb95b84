/** The HTTP API as the UI uses it; errors carry the API's code and message. */

import type {
  CapabilitiesWire,
  MessageWire,
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
export type StepDetail = StepWire;
export type Capabilities = CapabilitiesWire;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, {
    ...init,
    headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
  });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!response.ok)
    throw new ApiError(
      response.status,
      body?.error?.code ?? 'HTTP_ERROR',
      body?.error?.message ?? `The server answered ${response.status}.`,
    );
  return body as T;
}

const json = (value: unknown) => JSON.stringify(value);
const sessionPath = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;

export const api = {
  capabilities: () => request<Capabilities>('/api/capabilities'),
  listSessions: (options: { q?: string; cursor?: string | null; limit?: number } = {}) => {
    const params = new URLSearchParams();
    if (options.q) params.set('q', options.q);
    if (options.cursor) params.set('cursor', options.cursor);
    params.set('limit', String(options.limit ?? 30));
    return request<{ sessions: SessionSummary[]; nextCursor: string | null }>(`/api/sessions?${params}`);
  },
  createSession: (body: { question: string; settings?: Record<string, unknown>; docs?: string[]; search?: string[] }) =>
    request<SessionSummary>('/api/sessions', { method: 'POST', body: json(body) }),
  getSession: (id: string) => request<SessionDetail>(sessionPath(id)),
  rename: (id: string, title: string) =>
    request<SessionSummary>(sessionPath(id), { method: 'PATCH', body: json({ title }) }),
  remove: (id: string) => request<void>(sessionPath(id), { method: 'DELETE' }),
  stop: (id: string) => request<{ result: string }>(`${sessionPath(id)}/stop`, { method: 'POST' }),
  resume: (id: string, options: { from?: string; force?: boolean } = {}) =>
    request<SessionSummary>(`${sessionPath(id)}/resume`, { method: 'POST', body: json(options) }),
  fork: (id: string, from: string) =>
    request<SessionSummary>(`${sessionPath(id)}/fork`, { method: 'POST', body: json({ from, run: true }) }),
  send: (id: string, content: string) =>
    request<{ kind: string }>(`${sessionPath(id)}/messages`, { method: 'POST', body: json({ role: 'user', content }) }),
  steps: (id: string) => request<{ steps: Step[] }>(`${sessionPath(id)}/steps`),
  step: (id: string, runId: string, key: string) =>
    request<StepDetail>(`${sessionPath(id)}/steps/${encodeURIComponent(runId)}/${encodeURIComponent(key)}`),
  exportUrl: (id: string, format: 'md' | 'html' | 'json') => `${sessionPath(id)}/export?format=${format}`,
  eventsUrl: (id: string) => `${sessionPath(id)}/events`,
};
