import { configuredWebProviders } from '../providers/search/create-search-providers.ts';
import { markClaims } from '../research/mark-claims.ts';
import { parseResearchSettings } from '../research/research-settings.ts';
import { RESEARCH_WORKFLOW_NAME } from '../research/research-workflow.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import { parseJsonText } from '../shared/json-text.ts';
import type { OwnerStore } from '../store/owner-store.ts';
import { sessionSnapshotSchema } from '../store/snapshot-schema.ts';
import type { Session, SessionSnapshot } from '../store/store.ts';
import { partitionFolders } from './document-folders.ts';
import { legacySessionSchema, legacyToSnapshot, snapshotToLegacy } from './legacy-session.ts';
import type { PdfPrinter } from './print-pdf.ts';
import { boundedSettings } from './research-request.ts';
import type { ServiceContext } from './service-context.ts';
import { type ReportVersion, reportVersions } from './session-queries.ts';
import { sessionAdmission } from './user-limits.ts';

export const exportFormats = ['md', 'html', 'pdf', 'json', 'legacy-json'] as const;
export type ExportFormat = (typeof exportFormats)[number];

/** The versioned session file format. */
export const SESSION_FILE_FORMAT = 'quarry-session';
export const SESSION_FILE_VERSION = 1;

/** Largest import accepted, in bytes. */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024;

export interface ExportedFile {
  filename: string;
  contentType: string;
  /** Text, or bytes for a PDF. */
  body: string | Uint8Array<ArrayBuffer>;
  /** For HTML: the policy served with it (and written into it), so it can never load anything remote. */
  contentSecurityPolicy?: string;
  /**
   * The session's journal payloads the store could not read back (damage on disk), one line each:
   * the export holds everything else, and a JSON file names these (`damage` on their steps).
   */
  damaged: string[];
}

/**
 * Exported HTML runs no script and loads nothing from any host: a report shaped by a web source must
 * not make its reader's browser contact anyone. Inline styles only; images only as data URLs.
 */
export const EXPORT_CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Raw HTML in reports is shown as text (source text can never run script); links are checked by markdown-it. */
export async function renderMarkdown(text: string): Promise<string> {
  const { default: MarkdownIt } = await import('markdown-it');
  return new MarkdownIt({ html: false, linkify: true, typographer: false }).render(text);
}

/** Everything about a session, as export files and store migrations carry it. */
export async function buildSnapshot(store: OwnerStore, sessionId: string): Promise<SessionSnapshot> {
  const session = await store.getSession(sessionId);
  const graphThread = session.externalId?.startsWith('langgraph:') ?? false;
  const [messages, runs, steps, sources, checkpoints] = await Promise.all([
    store.listMessages(session.id),
    store.listRuns(session.id),
    store.listSteps(session.id, { includePrompts: true }),
    store.listSources(session.id),
    graphThread ? store.listCheckpointSnapshots(session.id) : [],
  ]);
  return {
    session: {
      id: session.id,
      ...(graphThread ? { externalId: session.externalId } : {}),
      title: session.title,
      question: session.question,
      status: session.status,
      settings: session.settings,
      workflow: session.workflow,
      error: session.error,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
    },
    messages: messages.map(({ seq, role, content, runId, phase, createdAt }) => ({
      seq,
      role,
      content,
      runId,
      phase,
      createdAt,
    })),
    runs: runs.map(({ id, number, kind, input, status, output, createdAt, endedAt }) => ({
      id,
      number,
      kind,
      input,
      status,
      output,
      createdAt,
      endedAt,
    })),
    steps,
    sources: sources.map(
      ({ url, title, contentHash, citation, timesConsidered, timesSelected, metadata, runId, createdAt }) => ({
        url,
        title,
        contentHash,
        citation,
        timesConsidered,
        timesSelected,
        metadata,
        runId,
        createdAt,
      }),
    ),
    ...(graphThread ? { checkpoints } : {}),
  };
}

function slug(title: string): string {
  return (
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'session'
  );
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${EXPORT_CONTENT_SECURITY_POLICY}">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>
body{font:17px/1.6 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}
h1,h2{line-height:1.25}a{color:#0a58ca}code{background:#f2f2f2;padding:0 .2em}
blockquote{margin:.6rem 0 .2rem;padding:.1rem 0 .1rem .9rem;border-left:3px solid #ccc}pre{overflow-x:auto}
@media (prefers-color-scheme: dark){body{color:#e8e8e8;background:#161616}a{color:#7ab7ff}code{background:#2a2a2a}blockquote{border-left-color:#555}}
</style></head><body>
${body}
</body></html>
`;
}

/**
 * The conversation after the first question, for Markdown and HTML exports: each follow-up as a
 * heading with its answer below it; a turn answered with a new report version names that version.
 */
function conversationMarkdown(
  messages: readonly { role: string; content: string }[],
  reports: readonly { version: number; report: string }[],
): string {
  const turns = messages.filter((message) => message.role !== 'system').slice(1);
  const parts: string[] = [];
  for (const message of turns) {
    if (message.role === 'user') {
      parts.push(`### ${message.content.replace(/\s+/g, ' ').trim()}`);
      continue;
    }
    const version = reports.find((report) => report.report === message.content)?.version;
    if (version === 1) continue;
    parts.push(
      version
        ? `_Answered with report version ${version}${version === reports.length ? ' (above)' : ''}._`
        : message.content,
    );
  }
  return parts.some((part) => part.startsWith('### ')) ? `\n## Conversation\n\n${parts.join('\n\n')}\n` : '';
}

/** The session as a file: the latest report as Markdown or a self-contained HTML page, or everything as JSON. */
export function exportSession(
  context: ServiceContext,
  request: { sessionId: string; format: string; version?: number },
): Promise<ExportedFile> {
  return exportFrom(context.store, request, context.printer);
}

/** `exportSession` on an owner's store (a share link reads its owner's session without a sign-in). */
export async function exportFrom(
  store: OwnerStore,
  request: {
    sessionId: string;
    format: string;
    /** The report version (md, html, pdf); default the latest. */
    version?: number;
    /** For someone other than its owner: no server paths. */
    reader?: boolean;
  },
  printer?: PdfPrinter,
): Promise<ExportedFile> {
  if (!(exportFormats as readonly string[]).includes(request.format))
    throw invalidInput('format', `"${request.format}" is not one of ${exportFormats.join(', ')}`);
  const data = await buildSnapshot(store, request.sessionId);
  const damaged = data.steps.flatMap((step) =>
    Object.entries(step.damage ?? {}).map(([part, what]) => `step ${step.key}: its ${part}: ${what}`),
  );
  const shown = request.reader ? withoutServerPaths(data) : data;
  return { ...(await render(shown, request.format, { printer, requester: store.ownerId }, request.version)), damaged };
}

/**
 * The session as someone other than its owner sees it (a share link): the documents it cites named
 * by their place in the documents folder (`guides/tides.html`), never by the server's own paths.
 */
function withoutServerPaths(data: SessionSnapshot): SessionSnapshot {
  const settings = data.session.settings as { docs?: unknown };
  const roots = (Array.isArray(settings.docs) ? settings.docs : [])
    .filter((root): root is string => typeof root === 'string' && root.startsWith('/'))
    .map((root) => (root.endsWith('/') ? root : `${root}/`))
    .sort((a, b) => b.length - a.length);
  if (roots.length === 0) return data;
  const relative = (text: string) => roots.reduce((result, root) => result.split(root).join(''), text);
  const relativeValue = (value: unknown): unknown =>
    typeof value === 'string'
      ? relative(value)
      : Array.isArray(value)
        ? value.map(relativeValue)
        : value && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([key, each]) => [key, relativeValue(each)]))
          : value;
  return {
    ...data,
    runs: data.runs.map((run) => ({ ...run, output: relativeValue(run.output) })),
    messages: data.messages.map((message) => ({ ...message, content: relative(message.content) })),
  } as SessionSnapshot;
}

/**
 * What a report version is called: the session's title, or for a version researched for a
 * follow-up question, that question (it answers it, not the session's).
 */
export function versionTitle(session: { title: string; question: string }, version: ReportVersion): string {
  return version.kind === 'follow-up' && version.question && version.question !== session.question
    ? version.question
    : session.title;
}

async function render(
  data: SessionSnapshot,
  format: string,
  pdf: { printer?: PdfPrinter; requester: string },
  wanted?: number,
): Promise<Omit<ExportedFile, 'damaged'>> {
  const name = slug(data.session.title);
  if (format === 'json') {
    const file = {
      format: SESSION_FILE_FORMAT,
      version: SESSION_FILE_VERSION,
      exportedAt: new Date().toISOString(),
      ...data,
    };
    return {
      filename: `${name}.quarry.json`,
      contentType: 'application/json',
      body: `${JSON.stringify(file, null, 2)}\n`,
    };
  }
  if (format === 'legacy-json') {
    return {
      filename: `${name}.legacy.json`,
      contentType: 'application/json',
      body: `${JSON.stringify(snapshotToLegacy(data), null, 2)}\n`,
    };
  }
  const reports = reportVersions(data.runs as never);
  const chosen = wanted === undefined ? reports.at(-1) : reports[wanted - 1];
  if (wanted !== undefined && !chosen)
    throw new QuarryError(
      'NOT_FOUND',
      `Session ${data.session.id.slice(0, 8)} has no report version ${wanted} (it has ${reports.length}).`,
      { details: { sessionId: data.session.id, version: wanted } },
    );
  // A reader's copy: flagged claims marked where they stand (the report lists them after its sections).
  const report = chosen && markClaims(chosen.report, chosen.claims);
  if (!chosen || !report)
    throw new QuarryError(
      'CONFLICT',
      `Session ${data.session.id.slice(0, 8)} has no report yet (it is ${data.session.status}). Export it as json to move it between machines.`,
      { details: { sessionId: data.session.id } },
    );
  // Each version is its own document, under its own title; the latest carries the conversation.
  const title = versionTitle(data.session, chosen);
  const latest = chosen === reports.at(-1);
  const file = `${slug(title)}${reports.length > 1 ? `-v${chosen.version}` : ''}`;
  const text = `${report.trimEnd()}\n${latest ? conversationMarkdown(data.messages, reports) : ''}`;
  if (format === 'md') return { filename: `${file}.md`, contentType: 'text/markdown; charset=utf-8', body: text };
  const page = htmlPage(title, await renderMarkdown(text));
  if (format === 'pdf') {
    const { printPdf } = await import('./print-pdf.ts');
    const body = pdf.printer ? await pdf.printer.print(page, pdf.requester) : await printPdf(page);
    return { filename: `${file}.pdf`, contentType: 'application/pdf', body };
  }
  return {
    filename: `${file}.html`,
    contentType: 'text/html; charset=utf-8',
    body: page,
    contentSecurityPolicy: EXPORT_CONTENT_SECURITY_POLICY,
  };
}

/**
 * Reads a session file (the JSON format above) and recreates the session. Everything is checked
 * before anything is written; a malformed, truncated or wrong-version file is refused with the reason.
 */
export interface ImportedSession {
  session: Session;
  /** Document folders the file named that this caller may not read; left out of the settings. */
  droppedFolders: string[];
  /** Web search providers the file named that have no key here; left out of the settings. */
  droppedProviders: string[];
}

export async function importSessionFile(context: ServiceContext, text: string): Promise<ImportedSession> {
  const limit = context.enforceLimits ? context.config.server.importBytes : MAX_IMPORT_BYTES;
  if (text.length > limit || Buffer.byteLength(text, 'utf8') > limit)
    throw new QuarryError('PAYLOAD_TOO_LARGE', `The file is larger than ${limit} bytes.`, {
      details: { field: 'file' },
    });
  return importSessionData(context, parseJsonText(text, 'file', '; the file may be truncated'));
}

/** A session file already parsed from JSON (a request body): checked in full, then imported. */
export async function importSessionData(context: ServiceContext, parsed: unknown): Promise<ImportedSession> {
  const header = parsed as { format?: unknown; version?: unknown; session_id?: unknown; user_query?: unknown };
  if (header && header.format === undefined && header.session_id !== undefined && header.user_query !== undefined) {
    // The per-session layout of earlier research tools.
    const legacy = legacySessionSchema.safeParse(parsed);
    if (!legacy.success) {
      const issue = legacy.error.issues[0]!;
      throw invalidInput(issue.path.join('.') || 'file', issue.message);
    }
    return importSnapshot(context, legacyToSnapshot(legacy.data));
  }
  if (header?.format !== SESSION_FILE_FORMAT)
    throw invalidInput('format', `expected "${SESSION_FILE_FORMAT}", found ${JSON.stringify(header?.format ?? null)}`);
  if (header.version !== SESSION_FILE_VERSION)
    throw invalidInput(
      'version',
      `this Quarry reads version ${SESSION_FILE_VERSION} files, not ${JSON.stringify(header.version ?? null)}`,
    );
  const result = sessionSnapshotSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw invalidInput(issue.path.join('.') || 'file', issue.message);
  }
  return importSnapshot(context, result.data as SessionSnapshot);
}

/**
 * Imports a snapshot keeping only the document folders this caller may read (a server's roots):
 * a file cannot make a server read a folder its operator did not allow. Web providers without a
 * key here are left out too, so the session resumes on the documents given then instead of failing.
 */
async function importSnapshot(context: ServiceContext, snapshot: SessionSnapshot): Promise<ImportedSession> {
  const listed = (value: unknown) =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  const { kept, dropped } = partitionFolders(context.folders, listed(snapshot.session.settings.docs));
  const configured: string[] = configuredWebProviders(context.config.providers);
  const search = listed(snapshot.session.settings.search);
  const filed = {
    ...snapshot.session.settings,
    docs: kept,
    ...(snapshot.session.settings.search === undefined
      ? {}
      : { search: search.filter((name) => configured.includes(name)) }),
  };
  // Within this server's budget ceilings too: a file without a budget gets the ceiling (issue 44).
  const research = snapshot.session.workflow.name === RESEARCH_WORKFLOW_NAME;
  const settings = research ? boundedSettings(context, filed) : filed;
  // A research session's settings are research settings: one Quarry does not have is refused, not stored.
  if (research) parseResearchSettings(settings, { strict: true });
  const session = await context.store.importSession(
    { ...snapshot, session: { ...snapshot.session, settings } },
    { admission: sessionAdmission(context) },
  );
  return {
    session,
    droppedFolders: dropped,
    droppedProviders: search.filter((name) => !configured.includes(name)),
  };
}
