import { QuarryError, invalidInput } from '../store/errors.ts';
import { sessionSnapshotSchema } from '../store/snapshot-schema.ts';
import type { Session, SessionSnapshot } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';
import { legacySessionSchema, legacyToSnapshot, snapshotToLegacy } from './legacy-session.ts';
import { reportVersions } from './session-queries.ts';

export const exportFormats = ['md', 'html', 'json', 'legacy-json'] as const;
export type ExportFormat = (typeof exportFormats)[number];

/** The versioned session file format. */
export const SESSION_FILE_FORMAT = 'quarry-session';
export const SESSION_FILE_VERSION = 1;

/** Largest import accepted, in bytes. */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024;

export interface ExportedFile {
  filename: string;
  contentType: string;
  body: string;
}

/** Raw HTML in reports is shown as text (source text can never run script); links are checked by markdown-it. */
export async function renderMarkdown(text: string): Promise<string> {
  const { default: MarkdownIt } = await import('markdown-it');
  return new MarkdownIt({ html: false, linkify: true, typographer: false }).render(text);
}

/** Everything about a session, as export files and store migrations carry it. */
export async function buildSnapshot(context: ServiceContext, sessionId: string): Promise<SessionSnapshot> {
  const session = await context.store.getSession(sessionId, { ownerId: context.ownerId });
  const [messages, runs, steps, sources] = await Promise.all([
    context.store.listMessages(session.id, { ownerId: context.ownerId }),
    context.store.listRuns(session.id, { ownerId: context.ownerId }),
    context.store.listSteps(session.id, { ownerId: context.ownerId, includePrompts: true }),
    context.store.listSources(session.id, { ownerId: context.ownerId }),
  ]);
  return {
    session: { id: session.id, title: session.title, question: session.question, status: session.status, settings: session.settings, workflow: session.workflow, error: session.error, createdAt: session.createdAt, updatedAt: session.updatedAt },
    messages: messages.map(({ seq, role, content, runId, phase, createdAt }) => ({ seq, role, content, runId, phase, createdAt })),
    runs: runs.map(({ id, number, kind, input, status, output, createdAt, endedAt }) => ({ id, number, kind, input, status, output, createdAt, endedAt })),
    steps,
    sources: sources.map(({ url, title, contentHash, citation, timesConsidered, timesSelected, metadata, runId, createdAt }) => ({ url, title, contentHash, citation, timesConsidered, timesSelected, metadata, runId, createdAt })),
  };
}

function slug(title: string): string {
  return title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'session';
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:17px/1.6 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}
h1,h2{line-height:1.25}a{color:#0a58ca}code{background:#f2f2f2;padding:0 .2em}
@media (prefers-color-scheme: dark){body{color:#e8e8e8;background:#161616}a{color:#7ab7ff}code{background:#2a2a2a}}
</style></head><body>
${body}
</body></html>
`;
}

/** The session as a file: the latest report as Markdown or a self-contained HTML page, or everything as JSON. */
export async function exportSession(context: ServiceContext, request: { sessionId: string; format: string }): Promise<ExportedFile> {
  if (!(exportFormats as readonly string[]).includes(request.format)) throw invalidInput('format', `"${request.format}" is not one of ${exportFormats.join(', ')}`);
  const data = await buildSnapshot(context, request.sessionId);
  const name = slug(data.session.title);
  if (request.format === 'json') {
    const file = { format: SESSION_FILE_FORMAT, version: SESSION_FILE_VERSION, exportedAt: new Date().toISOString(), ...data };
    return { filename: `${name}.quarry.json`, contentType: 'application/json', body: `${JSON.stringify(file, null, 2)}\n` };
  }
  if (request.format === 'legacy-json') {
    return { filename: `${name}.legacy.json`, contentType: 'application/json', body: `${JSON.stringify(snapshotToLegacy(data), null, 2)}\n` };
  }
  const latest = reportVersions(data.runs as never).at(-1)?.report;
  if (!latest) throw new QuarryError('CONFLICT', `Session ${data.session.id.slice(0, 8)} has no report yet (it is ${data.session.status}). Export it as json to move it between machines.`, { details: { sessionId: data.session.id } });
  if (request.format === 'md') return { filename: `${name}.md`, contentType: 'text/markdown; charset=utf-8', body: latest };
  return { filename: `${name}.html`, contentType: 'text/html; charset=utf-8', body: htmlPage(data.session.title, await renderMarkdown(latest)) };
}

/**
 * Reads a session file (the JSON format above) and recreates the session. Everything is checked
 * before anything is written; a malformed, truncated or wrong-version file is refused with the reason.
 */
export async function importSessionFile(context: ServiceContext, text: string): Promise<Session> {
  if (Buffer.byteLength(text, 'utf8') > MAX_IMPORT_BYTES) throw new QuarryError('PAYLOAD_TOO_LARGE', `The file is larger than ${MAX_IMPORT_BYTES} bytes.`, { details: { field: 'file' } });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalidInput('file', `not valid JSON (${(error as Error).message}); the file may be truncated`);
  }
  const header = parsed as { format?: unknown; version?: unknown; session_id?: unknown; user_query?: unknown };
  if (header && header.format === undefined && header.session_id !== undefined && header.user_query !== undefined) {
    // The per-session layout of earlier research tools.
    const legacy = legacySessionSchema.safeParse(parsed);
    if (!legacy.success) {
      const issue = legacy.error.issues[0]!;
      throw invalidInput(issue.path.join('.') || 'file', issue.message);
    }
    return context.store.importSession(legacyToSnapshot(legacy.data), { ownerId: context.ownerId });
  }
  if (header?.format !== SESSION_FILE_FORMAT) throw invalidInput('format', `expected "${SESSION_FILE_FORMAT}", found ${JSON.stringify(header?.format ?? null)}`);
  if (header.version !== SESSION_FILE_VERSION) throw invalidInput('version', `this Quarry reads version ${SESSION_FILE_VERSION} files, not ${JSON.stringify(header.version ?? null)}`);
  const result = sessionSnapshotSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw invalidInput(issue.path.join('.') || 'file', issue.message);
  }
  return context.store.importSession(result.data as SessionSnapshot, { ownerId: context.ownerId });
}
