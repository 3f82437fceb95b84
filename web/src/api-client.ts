/** The HTTP API as the UI uses it; errors carry the API's code and message. */

export interface SessionSummary {
  id: string;
  title: string;
  question: string;
  status: 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'interrupted';
  createdAt: string;
  updatedAt: string;
  progress: { phase: string | null; completedSteps: number; knownSteps: number; resumePoint: string | null };
}

export interface Source {
  id: string;
  url: string;
  title: string;
  citation: number | null;
  metadata: { fetched?: boolean; error?: string | null; provider?: string };
}

export interface Message {
  id: string;
  seq: number;
  role: 'user' | 'assistant' | 'system';
  content: string;
  createdAt: string;
}

export interface SessionDetail extends SessionSummary {
  settings: Record<string, unknown>;
  error: { code: string; message: string } | null;
  resumePoint: { nextStep: string | null; lastCompletedPhase: string | null; completedSteps: number; knownSteps: number };
  pendingInput: { key: string; payload: { outline?: { title: string; sections: { title: string; focus: string }[] } } } | null;
  messages: Message[];
  runs: { id: string; number: number; kind: string; status: string }[];
  report: { latest: string | null; versions: { version: number; runId: string; createdAt: string; report: string }[] };
  sources: Source[];
}

export interface Step {
  runId: string;
  key: string;
  phase: string | null;
  kind: string;
  status: string;
  attempts: number;
  durationMs: number | null;
  usage: { model?: string; inputTokens?: number; outputTokens?: number; costUsd?: number } | null;
}

export interface StepDetail extends Step {
  prompt: { system?: string; user: string } | null;
  output: unknown;
}

export interface Capabilities {
  analyst: { kind: 'llm' | 'extractive'; model: string | null };
  searchProviders: string[];
  defaultDocs: string[];
  defaultSearch: string[];
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { ...init, headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers } });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!response.ok) throw new ApiError(response.status, body?.error?.code ?? 'HTTP_ERROR', body?.error?.message ?? `The server answered ${response.status}.`);
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
  createSession: (body: { question: string; settings?: Record<string, unknown>; docs?: string[]; search?: string[] }) => request<SessionSummary>('/api/sessions', { method: 'POST', body: json(body) }),
  getSession: (id: string) => request<SessionDetail>(sessionPath(id)),
  rename: (id: string, title: string) => request<SessionSummary>(sessionPath(id), { method: 'PATCH', body: json({ title }) }),
  remove: (id: string) => request<void>(sessionPath(id), { method: 'DELETE' }),
  stop: (id: string) => request<{ result: string }>(`${sessionPath(id)}/stop`, { method: 'POST' }),
  resume: (id: string, options: { from?: string; force?: boolean } = {}) => request<SessionSummary>(`${sessionPath(id)}/resume`, { method: 'POST', body: json(options) }),
  fork: (id: string, from: string) => request<SessionSummary>(`${sessionPath(id)}/fork`, { method: 'POST', body: json({ from, run: true }) }),
  send: (id: string, content: string) => request<{ kind: string }>(`${sessionPath(id)}/messages`, { method: 'POST', body: json({ role: 'user', content }) }),
  steps: (id: string) => request<{ steps: Step[] }>(`${sessionPath(id)}/steps`),
  step: (id: string, runId: string, key: string) => request<StepDetail>(`${sessionPath(id)}/steps/${encodeURIComponent(runId)}/${encodeURIComponent(key)}`),
  exportUrl: (id: string, format: 'md' | 'html' | 'json') => `${sessionPath(id)}/export?format=${format}`,
  eventsUrl: (id: string) => `${sessionPath(id)}/events`,
};
