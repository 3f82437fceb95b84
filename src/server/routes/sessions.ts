import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import { followEvents } from '../../service/follow-events.ts';
import { forkSession, queueResume, stopSession } from '../../service/session-control.ts';
import { MAX_IMPORT_BYTES, exportSession, importSessionFile } from '../../service/session-export.ts';
import { deleteSession, listSessionSteps, renameSession, showSession } from '../../service/session-queries.ts';
import { listSessions } from '../../service/list-sessions.ts';
import { askSession, startResearch } from '../../service/start-research.ts';
import { QuarryError } from '../../store/errors.ts';
import type { AppEnv, ServerDependencies } from '../server-env.ts';
import { createSessionBody, eventsQuery, exportQuery, forkBody, listQuery, messageBody, messagesQuery, renameBody, resumeBody, sessionId, stepsQuery } from '../schemas.ts';
import { parseBody, parseParam, parseQuery } from '../validate.ts';
import { sessionDetail, sessionSummary } from './session-json.ts';

const tooLarge = (limit: number) =>
  bodyLimit({ maxSize: limit, onError: (c) => c.json({ error: { code: 'PAYLOAD_TOO_LARGE', message: `The request body is larger than ${limit} bytes.` } }, 413) });

/** `/api/sessions…`: every route calls the service functions the CLI calls. */
export function sessionRoutes(dependencies: ServerDependencies): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const id = (value: string | undefined) => parseParam(value, sessionId, 'id');

  app.get('/', async (c) => {
    const query = parseQuery(c, listQuery);
    const page = await listSessions(c.get('context'), { status: query.status, search: query.q, limit: query.limit, cursor: query.cursor });
    return c.json({ sessions: page.sessions.map(sessionSummary), nextCursor: page.nextCursor });
  });

  app.post('/', tooLarge(1024 * 1024), async (c) => {
    const body = await parseBody(c, createSessionBody);
    const context = c.get('context');
    const useDefaults = !body.docs && !body.search;
    const { session } = await startResearch(context, {
      question: body.question,
      title: body.title,
      settings: body.settings,
      docs: useDefaults ? dependencies.defaults.docs : (body.docs ?? []),
      search: useDefaults ? dependencies.defaults.search : (body.search ?? []),
    });
    // Sessions are created queued; start: false parks it until resumed.
    const created = body.start === false ? await context.store.updateSession(session.id, { status: 'interrupted' }, { ownerId: context.ownerId }) : session;
    return c.json(sessionSummary(created), 201);
  });

  app.post('/import', tooLarge(MAX_IMPORT_BYTES), async (c) => {
    const session = await importSessionFile(c.get('context'), await c.req.text());
    return c.json(sessionSummary(session), 201);
  });

  app.get('/:id', async (c) => c.json(sessionDetail(await showSession(c.get('context'), id(c.req.param('id'))))));

  const rename = async (c: Context<AppEnv>) => {
    const body = await parseBody(c, renameBody);
    return c.json(sessionSummary(await renameSession(c.get('context'), { sessionId: id(c.req.param('id')), title: body.title })));
  };
  app.patch('/:id', tooLarge(64 * 1024), rename);
  app.put('/:id', tooLarge(64 * 1024), rename);

  app.delete('/:id', async (c) => {
    await deleteSession(c.get('context'), { sessionId: id(c.req.param('id')) });
    return c.body(null, 204);
  });

  app.post('/:id/resume', tooLarge(64 * 1024), async (c) => {
    const body = await parseBody(c, resumeBody);
    return c.json(sessionSummary(await queueResume(c.get('context'), { sessionId: id(c.req.param('id')), from: body.from, force: body.force })), 202);
  });

  app.post('/:id/stop', async (c) => c.json({ result: await stopSession(c.get('context'), { sessionId: id(c.req.param('id')) }) }, 202));

  app.post('/:id/fork', tooLarge(64 * 1024), async (c) => {
    const body = await parseBody(c, forkBody);
    const context = c.get('context');
    const fork = await forkSession(context, { sessionId: id(c.req.param('id')), from: body.from, title: body.title });
    const result = body.run ? await queueResume(context, { sessionId: fork.id }) : fork;
    return c.json(sessionSummary(result), 201);
  });

  app.post('/:id/messages', tooLarge(1024 * 1024), async (c) => {
    const body = await parseBody(c, messageBody);
    const result = await askSession(c.get('context'), { sessionId: id(c.req.param('id')), text: body.content });
    if (result.kind === 'answer') return c.json({ kind: 'answer', accepted: result.accepted, requestKey: result.requestKey }, result.accepted ? 202 : 200);
    return c.json({ kind: 'follow-up', runId: result.run.id, message: result.message }, 202);
  });

  app.get('/:id/messages', async (c) => {
    const query = parseQuery(c, messagesQuery);
    const context = c.get('context');
    const messages = await context.store.listMessages(id(c.req.param('id')), { ...query, ownerId: context.ownerId });
    return c.json({ messages: messages.map((message) => ({ ...message, createdAt: new Date(message.createdAt).toISOString() })) });
  });

  app.get('/:id/steps', async (c) => {
    const query = parseQuery(c, stepsQuery);
    const steps = await listSessionSteps(c.get('context'), id(c.req.param('id')), { phase: query.phase, includePrompts: query.include === 'prompts' });
    return c.json({
      steps: steps.map((step) => ({
        runId: step.runId,
        key: step.key,
        seq: step.seq,
        phase: step.phase,
        kind: step.kind,
        status: step.status,
        attempts: step.attempts,
        startedAt: new Date(step.startedAt).toISOString(),
        endedAt: step.endedAt === null ? null : new Date(step.endedAt).toISOString(),
        durationMs: step.endedAt === null ? null : step.endedAt - step.startedAt,
        usage: step.usage,
        error: step.error,
        ...(query.include === 'prompts' && step.kind === 'llm' ? { prompt: step.prompt, output: step.output } : {}),
      })),
    });
  });

  // One step with its prompt and output, for clients that load prompts only when asked (keys may contain "/").
  app.get('/:id/steps/:runId/:key{.+}', async (c) => {
    const context = c.get('context');
    const session = await context.store.getSession(id(c.req.param('id')), { ownerId: context.ownerId });
    const runId = parseParam(c.req.param('runId'), sessionId, 'runId');
    const run = await context.store.getRun(runId);
    if (run.sessionId !== session.id) throw new QuarryError('RUN_NOT_FOUND', `Session ${session.id} has no run "${runId}".`, { details: { runId } });
    const step = await context.store.getStep(runId, decodeURIComponent(c.req.param('key')));
    return c.json({ ...step, startedAt: new Date(step.startedAt).toISOString(), endedAt: step.endedAt === null ? null : new Date(step.endedAt).toISOString() });
  });

  app.get('/:id/sources', async (c) => {
    const context = c.get('context');
    const sources = await context.store.listSources(id(c.req.param('id')), { ownerId: context.ownerId });
    return c.json({ sources: sources.map((source) => ({ ...source, createdAt: new Date(source.createdAt).toISOString() })) });
  });

  app.get('/:id/export', async (c) => {
    const { format } = parseQuery(c, exportQuery);
    const file = await exportSession(c.get('context'), { sessionId: id(c.req.param('id')), format });
    return c.body(file.body, 200, { 'content-type': file.contentType, 'content-disposition': `attachment; filename="${file.filename}"` });
  });

  app.get('/:id/events', async (c) => {
    const context = c.get('context');
    const sessionIdValue = id(c.req.param('id'));
    const { after } = parseQuery(c, eventsQuery);
    const lastEventId = Number(c.req.header('last-event-id'));
    const start = Number.isInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (after ?? 0);
    await context.store.getSession(sessionIdValue, { ownerId: context.ownerId });
    return streamSSE(c, async (stream) => {
      const controller = new AbortController();
      stream.onAbort(() => controller.abort());
      const heartbeat = setInterval(() => void stream.write(': heartbeat\n\n').catch(() => controller.abort()), (dependencies.heartbeatSeconds ?? 15) * 1000);
      try {
        for await (const event of followEvents(context.store, sessionIdValue, { after: start, ownerId: context.ownerId, signal: controller.signal })) {
          await stream.writeSSE({ id: String(event.offset), event: event.type, data: JSON.stringify({ offset: event.offset, type: event.type, data: event.data, createdAt: new Date(event.createdAt).toISOString() }) });
        }
      } catch (error) {
        if (!(error instanceof QuarryError)) throw error;
      } finally {
        clearInterval(heartbeat);
      }
    });
  });

  return app;
}
