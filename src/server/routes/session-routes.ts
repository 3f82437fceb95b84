import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { citationPassage } from '../../service/citation-passage.ts';
import { listSessions } from '../../service/list-sessions.ts';
import { forkSession, queueResume, stopSession } from '../../service/session-control.ts';
import { exportSession, importSessionData } from '../../service/session-export.ts';
import {
  deleteSession,
  getSessionStep,
  listSessionMessages,
  listSessionSources,
  listSessionSteps,
  sessionReport,
  showSession,
} from '../../service/session-queries.ts';
import { updateSession } from '../../service/session-settings.ts';
import { sharedSince, shareSession, stopSharing } from '../../service/share-links.ts';
import { askSession, startResearch } from '../../service/start-research.ts';
import { invalidInput } from '../../shared/errors.ts';
import type { AppEnv } from '../server-env.ts';
import { throwValidationError } from '../validation-hook.ts';
import {
  citationParams,
  citationQuery,
  citationSchema,
  createSessionBody,
  deleteQuery,
  errorResponses,
  exportQuery,
  forkBody,
  idParams,
  listQuery,
  messageBody,
  messageSchema,
  messagesQuery,
  reportParams,
  reportSchema,
  resumeBody,
  sessionDetailSchema,
  sessionPageSchema,
  sessionSummarySchema,
  shareLinkSchema,
  shareStateSchema,
  sourceSchema,
  stepParams,
  stepSchema,
  stepsQuery,
  updateSessionBody,
} from '../wire.ts';
import { messageWire, reportVersionWire, sessionDetail, sessionSummary, sourceWire, stepWire } from './to-wire.ts';

const json = <Schema extends z.ZodType>(schema: Schema, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const body = <Schema extends z.ZodType>(schema: Schema) => ({
  required: true,
  content: { 'application/json': { schema } },
});
const optionalBody = <Schema extends z.ZodType>(schema: Schema) => ({
  required: false,
  content: { 'application/json': { schema } },
});
const { 400: invalid, 403: forbidden, 404: notFound, 409: conflict, 413: tooLarge, 429: limited } = errorResponses;

const tags = ['sessions'];

const routes = {
  list: createRoute({
    method: 'get',
    path: '/',
    tags,
    summary: 'Sessions, newest update first (metadata only)',
    request: { query: listQuery },
    responses: { 200: json(sessionPageSchema, 'A page of sessions'), 400: invalid },
  }),
  create: createRoute({
    method: 'post',
    path: '/',
    tags,
    summary: 'Create a research session; it starts at once unless start is false',
    request: { body: body(createSessionBody) },
    responses: {
      201: json(sessionSummarySchema, 'The new session'),
      200: json(sessionSummarySchema, 'The existing session with this externalId'),
      400: invalid,
      403: forbidden,
      413: tooLarge,
      429: limited,
    },
  }),
  importFile: createRoute({
    method: 'post',
    path: '/import',
    tags,
    summary:
      'Import a quarry-session (or legacy) JSON file; folders this server does not read, and web providers without a key here, are dropped',
    request: { body: body(z.record(z.string(), z.unknown())) },
    responses: {
      201: json(
        sessionSummarySchema.extend({ droppedFolders: z.array(z.string()), droppedProviders: z.array(z.string()) }),
        'The imported session',
      ),
      400: invalid,
      413: tooLarge,
    },
  }),
  show: createRoute({
    method: 'get',
    path: '/{id}',
    tags,
    summary:
      'Everything about a session: settings, status, resume point, messages, runs, reports and claims, sources, forks',
    request: { params: idParams },
    responses: { 200: json(sessionDetailSchema, 'The session'), 404: notFound },
  }),
  update: createRoute({
    method: 'patch',
    path: '/{id}',
    tags,
    summary: 'Rename, or change settings (effective on the next resume; not while running)',
    request: { params: idParams, body: body(updateSessionBody) },
    responses: { 200: json(sessionSummarySchema, 'The session'), 400: invalid, 404: notFound, 409: conflict },
  }),
  replace: createRoute({
    method: 'put',
    path: '/{id}',
    tags,
    summary: 'The same as PATCH: rename, or change settings (for clients that send PUT)',
    request: { params: idParams, body: body(updateSessionBody) },
    responses: { 200: json(sessionSummarySchema, 'The session'), 400: invalid, 404: notFound, 409: conflict },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/{id}',
    tags,
    summary: 'Delete; a running session needs force=true (it is stopped first)',
    request: { params: idParams, query: deleteQuery },
    responses: { 204: { description: 'Deleted' }, 404: notFound, 409: conflict },
  }),
  share: createRoute({
    method: 'post',
    path: '/{id}/share',
    tags,
    summary: 'Make a read-only share link (shown once); a link the session had stops working',
    request: { params: idParams },
    responses: { 201: json(shareLinkSchema, 'The new link'), 404: notFound },
  }),
  shareState: createRoute({
    method: 'get',
    path: '/{id}/share',
    tags,
    summary: 'Whether the session has a share link, and since when (never the link itself)',
    request: { params: idParams },
    responses: { 200: json(shareStateSchema, 'Sharing'), 404: notFound },
  }),
  unshare: createRoute({
    method: 'delete',
    path: '/{id}/share',
    tags,
    summary: 'Stop sharing: the link stops working at once',
    request: { params: idParams },
    responses: { 204: { description: 'Not shared any more' }, 404: notFound },
  }),
  resume: createRoute({
    method: 'post',
    path: '/{id}/resume',
    tags,
    summary: 'Resume at the resume point, rewind in place (from), run again (force), or with more sources',
    request: { params: idParams, body: optionalBody(resumeBody) },
    responses: {
      202: json(sessionSummarySchema, 'Queued'),
      400: invalid,
      403: forbidden,
      404: notFound,
      409: conflict,
    },
  }),
  stop: createRoute({
    method: 'post',
    path: '/{id}/stop',
    tags,
    summary: 'Stop a queued or running session',
    request: { params: idParams },
    responses: {
      202: json(z.object({ result: z.enum(['interrupted', 'requested', 'not-running']) }), 'Stopped or requested'),
      404: notFound,
    },
  }),
  fork: createRoute({
    method: 'post',
    path: '/{id}/fork',
    tags,
    summary: 'Fork before a step into a new session (run: true starts it)',
    request: { params: idParams, body: optionalBody(forkBody) },
    responses: { 201: json(sessionSummarySchema, 'The new session'), 404: notFound },
  }),
  postMessage: createRoute({
    method: 'post',
    path: '/{id}/messages',
    tags,
    summary: 'A follow-up question, or the answer to a waiting outline review',
    request: { params: idParams, body: body(messageBody) },
    responses: {
      202: json(
        z.union([
          z.object({ kind: z.literal('answer'), accepted: z.literal(true), requestKey: z.string() }),
          z.object({ kind: z.literal('follow-up'), runId: z.string(), message: messageSchema.nullable() }),
        ]),
        'Accepted',
      ),
      200: json(
        z.object({ kind: z.literal('answer'), accepted: z.literal(false), requestKey: z.string() }),
        'A duplicate or late answer, not applied',
      ),
      404: notFound,
      409: conflict,
      413: tooLarge,
    },
  }),
  messages: createRoute({
    method: 'get',
    path: '/{id}/messages',
    tags,
    summary: 'The conversation',
    request: { params: idParams, query: messagesQuery },
    responses: { 200: json(z.object({ messages: z.array(messageSchema) }), 'Messages'), 404: notFound },
  }),
  steps: createRoute({
    method: 'get',
    path: '/{id}/steps',
    tags,
    summary: "The journal; include=prompts adds each step's input, prompt and output",
    request: { params: idParams, query: stepsQuery },
    responses: { 200: json(z.object({ steps: z.array(stepSchema) }), 'Steps'), 404: notFound },
  }),
  step: createRoute({
    method: 'get',
    path: '/{id}/steps/{runId}/{key}',
    tags,
    summary: 'One step with its input, prompt (also while it runs, or after it failed) and output',
    request: { params: stepParams },
    responses: { 200: json(stepSchema, 'The step'), 404: notFound },
  }),
  sources: createRoute({
    method: 'get',
    path: '/{id}/sources',
    tags,
    summary: 'Sources with citation numbers',
    request: { params: idParams },
    responses: { 200: json(z.object({ sources: z.array(sourceSchema) }), 'Sources'), 404: notFound },
  }),
  exportFile: createRoute({
    method: 'get',
    path: '/{id}/export',
    tags,
    summary: 'Export as md, html (self-contained, with a Content-Security-Policy), json or legacy-json',
    request: { params: idParams, query: exportQuery },
    responses: {
      200: { description: 'The file: Markdown, a self-contained HTML page, or JSON' },
      404: notFound,
      409: conflict,
    },
  }),
  report: createRoute({
    method: 'get',
    path: '/{id}/reports/{version}',
    tags,
    summary: 'One report version with its text (the detail carries only the latest text)',
    request: { params: reportParams },
    responses: { 200: json(reportSchema, 'The report version'), 404: notFound },
  }),
  citation: createRoute({
    method: 'get',
    path: '/{id}/citations/{number}',
    tags,
    summary:
      'What citation [n] of a report version (or, with ?answer=, of an answer in the conversation) points to: the source, the claims citing it, its passages in place',
    request: { params: citationParams, query: citationQuery },
    responses: { 200: json(citationSchema, 'The cited source and passages'), 404: notFound },
  }),
};

/** `/api/sessions…`: every route calls a service function, the same ones the CLI calls. */
/** `publicUrl`: the server's address as readers reach it (share links), else each request's origin. */
export function sessionRoutes(options: { publicUrl?: string | null } = {}) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(routes.list, async (c) => {
      const query = c.req.valid('query');
      if (query.externalId !== undefined) {
        const found = await c.get('context').store.findSessionByExternalId(query.externalId);
        return c.json({ sessions: found ? [sessionSummary(found)] : [], nextCursor: null }, 200);
      }
      const page = await listSessions(c.get('context'), {
        status: query.status,
        search: query.q,
        limit: query.limit,
        cursor: query.cursor,
      });
      return c.json({ sessions: page.sessions.map(sessionSummary), nextCursor: page.nextCursor }, 200);
    })
    .openapi(routes.create, async (c) => {
      const request = c.req.valid('json');
      const { session, created } = await startResearch(c.get('context'), request);
      return created ? c.json(sessionSummary(session), 201) : c.json(sessionSummary(session), 200);
    })
    .openapi(routes.importFile, async (c) => {
      const imported = await importSessionData(c.get('context'), c.req.valid('json'));
      return c.json(
        {
          ...sessionSummary(imported.session),
          droppedFolders: imported.droppedFolders,
          droppedProviders: imported.droppedProviders,
        },
        201,
      );
    })
    .openapi(routes.show, async (c) =>
      c.json(sessionDetail(await showSession(c.get('context'), c.req.valid('param').id)), 200),
    )
    .openapi(routes.update, async (c) => {
      const session = await updateSession(c.get('context'), {
        sessionId: c.req.valid('param').id,
        ...c.req.valid('json'),
      });
      return c.json(sessionSummary(session), 200);
    })
    .openapi(routes.replace, async (c) => {
      const session = await updateSession(c.get('context'), {
        sessionId: c.req.valid('param').id,
        ...c.req.valid('json'),
      });
      return c.json(sessionSummary(session), 200);
    })
    .openapi(routes.share, async (c) => {
      const link = await shareSession(c.get('context'), c.req.valid('param').id);
      const origin = (options.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '');
      return c.json(
        { url: `${origin}${link.path}`, path: link.path, sharedAt: new Date(link.sharedAt).toISOString() },
        201,
      );
    })
    .openapi(routes.shareState, async (c) => {
      const since = await sharedSince(c.get('context'), c.req.valid('param').id);
      return c.json({ shared: since !== null, sharedAt: since === null ? null : new Date(since).toISOString() }, 200);
    })
    .openapi(routes.unshare, async (c) => {
      await stopSharing(c.get('context'), c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(routes.remove, async (c) => {
      await deleteSession(c.get('context'), {
        sessionId: c.req.valid('param').id,
        force: c.req.valid('query').force === 'true',
      });
      return c.body(null, 204);
    })
    .openapi(routes.resume, async (c) => {
      const session = await queueResume(c.get('context'), {
        sessionId: c.req.valid('param').id,
        ...c.req.valid('json'),
      });
      return c.json(sessionSummary(session), 202);
    })
    .openapi(routes.stop, async (c) =>
      c.json({ result: await stopSession(c.get('context'), { sessionId: c.req.valid('param').id }) }, 202),
    )
    .openapi(routes.fork, async (c) => {
      const context = c.get('context');
      const request = c.req.valid('json');
      const fork = await forkSession(context, {
        sessionId: c.req.valid('param').id,
        from: request.from,
        turn: request.turn,
        title: request.title,
        run: request.run,
      });
      return c.json(sessionSummary(fork), 201);
    })
    .openapi(routes.postMessage, async (c) => {
      const result = await askSession(c.get('context'), {
        sessionId: c.req.valid('param').id,
        text: c.req.valid('json').content,
      });
      if (result.kind === 'answer') {
        return result.accepted
          ? c.json({ kind: 'answer' as const, accepted: true as const, requestKey: result.requestKey }, 202)
          : c.json({ kind: 'answer' as const, accepted: false as const, requestKey: result.requestKey }, 200);
      }
      const message = result.message ? messageWire(result.message) : null;
      return c.json({ kind: 'follow-up' as const, runId: result.run.id, message }, 202);
    })
    .openapi(routes.messages, async (c) => {
      const messages = await listSessionMessages(c.get('context'), c.req.valid('param').id, c.req.valid('query'));
      return c.json({ messages: messages.map(messageWire) }, 200);
    })
    .openapi(routes.steps, async (c) => {
      const query = c.req.valid('query');
      const detail = query.include === 'prompts' ? true : query.include === 'inputs' ? 'inputs' : false;
      const steps = await listSessionSteps(c.get('context'), c.req.valid('param').id, {
        phase: query.phase,
        includePrompts: detail === true,
      });
      return c.json({ steps: steps.map((step) => stepWire(step, detail)) }, 200);
    })
    .openapi(routes.step, async (c) => {
      const { id, runId, key } = c.req.valid('param');
      return c.json(stepWire(await getSessionStep(c.get('context'), { sessionId: id, runId, key }), true), 200);
    })
    .openapi(routes.sources, async (c) => {
      const sources = await listSessionSources(c.get('context'), c.req.valid('param').id);
      return c.json({ sources: sources.map(sourceWire) }, 200);
    })
    .openapi(routes.exportFile, async (c) => {
      const file = await exportSession(c.get('context'), {
        sessionId: c.req.valid('param').id,
        format: c.req.valid('query').format,
        version: c.req.valid('query').version,
      });
      return c.body(file.body, 200, {
        'content-type': file.contentType,
        'content-disposition': `attachment; filename="${file.filename}"`,
        ...(file.contentSecurityPolicy ? { 'content-security-policy': file.contentSecurityPolicy } : {}),
        // How many journal payloads the store could not read back (damage on disk), when any.
        ...(file.damaged.length > 0 ? { 'x-quarry-damaged-payloads': String(file.damaged.length) } : {}),
      });
    })
    .openapi(routes.report, async (c) => {
      const { id, version } = c.req.valid('param');
      const report = await sessionReport(c.get('context'), { sessionId: id, version });
      return c.json({ ...reportVersionWire(report), report: report.report }, 200);
    })
    .openapi(routes.citation, async (c) => {
      const { id, number } = c.req.valid('param');
      const { version, answer } = c.req.valid('query');
      if (version !== undefined && answer !== undefined)
        throw invalidInput('answer', 'give a report version or an answer, not both');
      const view = await citationPassage(c.get('context'), { sessionId: id, number, version, answer });
      return c.json(view, 200);
    });
}

export type SessionRoutes = ReturnType<typeof sessionRoutes>;
