import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { configuredWebProviders, createWebProvider } from '../providers/search/create-search-providers.ts';
import { indexFolders, type IndexFoldersOptions, type IndexReport } from '../providers/search/local-corpus/index-folders.ts';
import { createLanguageModel } from '../providers/llm/create-language-model.ts';
import { parseResearchSettings } from '../research/research-settings.ts';
import { RESEARCH_WORKFLOW_NAME, RESEARCH_WORKFLOW_VERSION, defaultTitle } from '../research/research-workflow.ts';
import { QuarryError, invalidInput } from '../store/errors.ts';
import type { Message, Run, Session } from '../store/store.ts';
import type { ServiceContext } from './service-context.ts';
import { answerInput, pendingInput } from './session-control.ts';

export interface StartResearchRequest {
  question: string;
  /** Any research setting (iterations, breadth, model, reviewOutline…). */
  settings?: Record<string, unknown>;
  /** Document folders for the local corpus; indexed before the run starts. */
  docs?: string[];
  /** Web search providers by name. */
  search?: string[];
  title?: string;
  /** A chosen session id (the chat endpoint derives one from the conversation); new ids otherwise. */
  id?: string;
}

export interface StartResearchResult {
  session: Session;
  index: IndexReport | null;
}

/** Absolute folders that exist, or `INVALID_INPUT` naming the one that does not. */
export function resolveFolders(folders: string[]): string[] {
  return folders.map((folder) => {
    const absolute = resolve(folder);
    if (!existsSync(absolute) || !statSync(absolute).isDirectory()) throw invalidInput('docs', `${folder} is not a folder`);
    return absolute;
  });
}

/**
 * Validates a research request and creates its session, queued. Document folders are indexed
 * first (incrementally); the model and the web providers are checked against the environment now,
 * so a bad setting is refused before anything is stored.
 */
export async function startResearch(context: ServiceContext & { env?: NodeJS.ProcessEnv }, request: StartResearchRequest, indexOptions: IndexFoldersOptions = {}): Promise<StartResearchResult> {
  const env = context.env ?? process.env;
  const question = request.question?.trim() ?? '';
  if (!question) throw invalidInput('question', 'must not be empty');
  const docs = resolveFolders(request.docs ?? []);
  const search = request.search ?? [];
  const model = (request.settings?.model as string | undefined) ?? env.QUARRY_MODEL;
  const settings = parseResearchSettings({ ...request.settings, docs, search, ...(model ? { model } : {}) });
  if (settings.model) createLanguageModel(settings.model, env);
  if (settings.fastModel) createLanguageModel(settings.fastModel, env);
  for (const name of search) createWebProvider(name, env);
  if (docs.length === 0 && search.length === 0) {
    const configured = configuredWebProviders(env);
    throw new QuarryError(
      'INVALID_INPUT',
      `No sources to research: give a documents folder (--docs <folder>) or a web search provider (--search <provider>).${configured.length ? ` Configured here: ${configured.join(', ')}.` : ' Web providers need a key in the environment (TAVILY_API_KEY, BRAVE_API_KEY, EXA_API_KEY, JINA_API_KEY) or SEARXNG_URL.'}`,
      { details: { field: 'docs' } },
    );
  }
  const index = docs.length > 0 ? await indexFolders(context.store, docs, indexOptions) : null;
  const session = await context.store.createSession({
    id: request.id,
    ownerId: context.ownerId,
    title: request.title?.trim() || defaultTitle(question),
    question,
    settings,
    workflow: { name: RESEARCH_WORKFLOW_NAME, version: RESEARCH_WORKFLOW_VERSION },
    message: { role: 'user', content: question },
    run: { kind: 'initial', input: { question, mode: 'initial' } },
  });
  return { session, index };
}

export type AskResult = { kind: 'answer'; accepted: boolean; requestKey: string } | { kind: 'follow-up'; run: Run; message: Message | null };

/**
 * A user message on a session: the answer to its waiting request, or a follow-up question that
 * starts a new run (queued). A running session is refused.
 */
export async function askSession(context: ServiceContext, request: { sessionId: string; text: string }): Promise<AskResult> {
  const text = request.text ?? '';
  const session = await context.store.getSession(request.sessionId, { ownerId: context.ownerId });
  if (session.status === 'waiting' || (await pendingInput(context, session)) !== null) {
    const answered = await answerInput(context, { sessionId: session.id, value: text.trim() });
    return { kind: 'answer', accepted: answered.accepted, requestKey: answered.requestKey };
  }
  if (!text.trim()) throw invalidInput('text', 'must not be empty');
  if (session.status === 'running') {
    throw new QuarryError('SESSION_ALREADY_RUNNING', `Session ${session.id.slice(0, 8)} is still running; ask once it has finished, or stop it first.`, { details: { sessionId: session.id } });
  }
  const started = await context.store.startRun({ sessionId: session.id, ownerId: context.ownerId, kind: 'follow-up', input: { question: text.trim(), mode: 'follow-up' }, message: { role: 'user', content: text.trim() } });
  return { kind: 'follow-up', ...started };
}
