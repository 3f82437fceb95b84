import { configuredWebProviders } from '../providers/search/create-search-providers.ts';
import type { IndexFoldersOptions, IndexReport } from '../providers/search/local-corpus/index-folders.ts';
import { isApproval } from '../research/outline-review.ts';
import { parseResearchSettings } from '../research/research-settings.ts';
import { defaultTitle, RESEARCH_WORKFLOW_NAME, RESEARCH_WORKFLOW_VERSION } from '../research/research-workflow.ts';
import { isQuarryError, QuarryError } from '../shared/errors.ts';
import type { Message, Run, Session } from '../store/store.ts';
import { checkModels } from './preflight.ts';
import { boundedSettings, checkQuestion, requestSources, researchSettings } from './research-request.ts';
import type { ServiceContext } from './service-context.ts';
import { answerInput, pendingInput, refuseGraphThread } from './session-control.ts';
import { admissionFor, runAdmission } from './user-limits.ts';

export interface StartResearchRequest {
  question: string;
  /** Any research setting (iterations, breadth, model, reviewOutline…). */
  settings?: Record<string, unknown>;
  /** Document folders (server: root names or folders inside them). Omitted with `search`: the defaults. */
  docs?: string[];
  /** Web search providers by name. Omitted with `docs`: the defaults. */
  search?: string[];
  title?: string;
  /** A chosen session id (the chat endpoint's conversations); a new id otherwise. */
  id?: string;
  /** False: create it parked (`interrupted`), to be resumed later. Default true (queued). */
  start?: boolean;
  /** The caller's own id (a batch or job id): a known one returns its session instead of a new one. */
  externalId?: string;
  /** What the client said with the request that research does not use, kept with the run (see `RunClient`). */
  client?: RunClient;
}

/**
 * What a client sent with the request that starts a run and wants back on later reads (the Responses
 * API's `metadata`, `background` and `previous_response_id`): kept in the run's input beside the
 * question. The workflow never reads it.
 */
export interface RunClient {
  metadata?: Record<string, string>;
  background?: boolean;
  previousResponseId?: string;
  /** Instructions for this turn only (the Responses API's per-request `instructions`). */
  instructions?: string;
}

function runInput(question: string, mode: 'initial' | 'follow-up', client: RunClient | undefined) {
  return {
    question,
    mode,
    ...(client ? { client } : {}),
    ...(client?.instructions ? { instructions: client.instructions } : {}),
  };
}

export interface StartResearchResult {
  session: Session;
  /** The indexing report when folders were indexed before the session was created (the CLI). */
  index: IndexReport | null;
  /** False when `externalId` named a session that already existed (it is returned unchanged). */
  created: boolean;
}

/**
 * Validates a research request and creates its session, queued (or parked with `start: false`, in
 * the same transaction). The model and the web providers are checked first, so a bad setting is
 * refused before anything is stored; document folders are indexed (CLI) or scheduled (server).
 */
export async function startResearch(
  context: ServiceContext,
  request: StartResearchRequest,
  indexOptions: Pick<IndexFoldersOptions, 'onProgress' | 'signal'> = {},
): Promise<StartResearchResult> {
  if (request.externalId !== undefined) {
    const existing = await context.store.findSessionByExternalId(request.externalId);
    if (existing) return { session: existing, index: null, created: false };
  }
  const question = checkQuestion(context, request.question ?? '');
  const sources = requestSources(context, request);
  const settings = researchSettings(context, request.settings, sources);
  checkModels(context, settings);
  if (sources.docs.length === 0 && sources.search.length === 0) {
    const configured = configuredWebProviders(context.config.providers);
    throw new QuarryError(
      'INVALID_INPUT',
      `No sources to research: give a documents folder (--docs <folder>) or a web search provider (--search <provider>).${configured.length ? ` Configured here: ${configured.join(', ')}.` : ' Web providers need a key in the environment (TAVILY_API_KEY, BRAVE_API_KEY, EXA_API_KEY, JINA_API_KEY) or SEARXNG_URL.'}`,
      { details: { field: 'docs' } },
    );
  }
  const index = await context.indexer.ensure(sources.docs, indexOptions);
  let created = true;
  const session = await context.store
    .createSession({
      id: request.id,
      title: request.title?.trim() || defaultTitle(question),
      question,
      settings,
      workflow: { name: RESEARCH_WORKFLOW_NAME, version: RESEARCH_WORKFLOW_VERSION },
      status: request.start === false ? 'interrupted' : 'queued',
      message: { role: 'user', content: question },
      run: { kind: 'initial', input: runInput(question, 'initial', request.client) },
      externalId: request.externalId,
      // A parked session (start: false) runs nothing yet: its resume counts against the active runs.
      admission: admissionFor(context),
    })
    .catch(async (error: unknown) => {
      // Two creates with one external id at once: the other one won; return its session.
      const existing =
        isQuarryError(error, 'CONFLICT') && request.externalId !== undefined
          ? await context.store.findSessionByExternalId(request.externalId)
          : null;
      if (!existing) throw error;
      created = false;
      return existing;
    });
  return { session, index, created };
}

export type AskResult =
  | { kind: 'answer'; accepted: boolean; requestKey: string }
  | { kind: 'follow-up'; run: Run; message: Message | null };

/**
 * A user message on a session: the answer to its waiting request, or a follow-up question that
 * starts a new run (queued). A running session is refused; an approval word sent to a session that
 * is no longer waiting is a late duplicate, answered `accepted: false`, never a new question.
 */
export async function askSession(
  context: ServiceContext,
  request: { sessionId: string; text: string; client?: RunClient },
): Promise<AskResult> {
  const session = await context.store.getSession(request.sessionId);
  refuseGraphThread(session, 'ask');
  const pending = await pendingInput(context, session);
  if (session.status === 'waiting' || pending !== null) {
    const answered = await answerInput(context, { sessionId: session.id, value: (request.text ?? '').trim() });
    return { kind: 'answer', accepted: answered.accepted, requestKey: answered.requestKey };
  }
  const text = checkQuestion(context, request.text ?? '', 'text');
  if (session.status === 'running' || session.status === 'queued') {
    throw new QuarryError(
      'SESSION_ALREADY_RUNNING',
      `Session ${session.id.slice(0, 8)} is still ${session.status}; ask once it has finished, or stop it first.`,
      { details: { sessionId: session.id } },
    );
  }
  const answeredKey = await lastAnsweredRequest(context, session);
  if (answeredKey && isApproval(text)) return { kind: 'answer', accepted: false, requestKey: answeredKey };
  checkModels(context, parseResearchSettings(session.settings));
  // The server's budgets bind this run too, whatever the session's settings became since it began.
  const bounded = boundedSettings(context, session.settings);
  const started = await context.store.startRun({
    sessionId: session.id,
    kind: 'follow-up',
    input: runInput(text, 'follow-up', request.client),
    message: { role: 'user', content: text },
    admission: runAdmission(context),
    ...(bounded !== session.settings ? { settings: bounded } : {}),
  });
  return { kind: 'follow-up', ...started };
}

/** The key of the current run's last answered input request, or null. */
async function lastAnsweredRequest(context: ServiceContext, session: Session): Promise<string | null> {
  const journal = await context.store.loadCurrentJournal(session.id);
  return journal.findLast((step) => step.kind === 'input' && step.status === 'completed')?.key ?? null;
}
