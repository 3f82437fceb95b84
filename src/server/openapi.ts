import { z } from 'zod';
import { chatCompletionBody, createSessionBody, forkBody, messageBody, renameBody, resumeBody } from './schemas.ts';

const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } } });
const error = { description: 'An error: `{ "error": { "code", "message" } }`' };
const ok = (description: string) => ({ description });
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const query = (name: string, description: string) => ({ name, in: 'query', required: false, schema: { type: 'string' }, description });

/** The OpenAPI 3.1 document, generated from the zod schemas that validate the requests. */
export function openApiDocument() {
  const session = { parameters: [idParameter] };
  return {
    openapi: '3.1.0',
    info: { title: 'Quarry API', version: '0.1.0', description: 'Deep research sessions that never lose their place. Errors are `{ "error": { "code", "message" } }`.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Required once users exist (quarry users add).' } } },
    security: [{ bearer: [] }],
    paths: {
      '/healthz': { get: { summary: 'Liveness and the store in use', security: [], responses: { 200: ok('Healthy') } } },
      '/api/capabilities': { get: { summary: 'What this server can do: analyst, search providers, default folders, limits', responses: { 200: ok('Capabilities') } } },
      '/api/sessions': {
        get: { summary: 'Sessions, newest update first (metadata only)', parameters: [query('status', 'comma-separated statuses'), query('q', 'text in title or question'), query('limit', '1-500'), query('cursor', 'nextCursor of the previous page')], responses: { 200: ok('A page of sessions'), 400: error } },
        post: { summary: 'Create a research session; it starts at once unless start is false', requestBody: json(createSessionBody), responses: { 201: ok('The session'), 400: error, 413: error } },
      },
      '/api/sessions/import': { post: { summary: 'Import a quarry-session (or legacy) JSON file', requestBody: { content: { 'application/json': { schema: { type: 'object' } } } }, responses: { 201: ok('The imported session'), 400: error, 413: error } } },
      '/api/sessions/{id}': {
        ...session,
        get: { summary: 'Everything about a session: settings, status, resume point, messages, runs, reports, sources', responses: { 200: ok('The session'), 404: error } },
        patch: { summary: 'Rename', requestBody: json(renameBody), responses: { 200: ok('The session'), 400: error, 404: error } },
        put: { summary: 'Rename (as PATCH)', requestBody: json(renameBody), responses: { 200: ok('The session'), 400: error, 404: error } },
        delete: { summary: 'Delete, stopping a live run first', responses: { 204: ok('Deleted'), 404: error } },
      },
      '/api/sessions/{id}/resume': { ...session, post: { summary: 'Resume at the resume point, or rewind in place (from)', requestBody: json(resumeBody), responses: { 202: ok('Queued'), 404: error, 409: error } } },
      '/api/sessions/{id}/stop': { ...session, post: { summary: 'Stop a live run', responses: { 202: ok('Stopped or requested'), 404: error } } },
      '/api/sessions/{id}/fork': { ...session, post: { summary: 'Fork before a step into a new session', requestBody: json(forkBody), responses: { 201: ok('The new session'), 404: error } } },
      '/api/sessions/{id}/messages': {
        ...session,
        get: { summary: 'The conversation', parameters: [query('runId', 'only this run'), query('phase', 'only this phase')], responses: { 200: ok('Messages'), 404: error } },
        post: { summary: 'A follow-up question, or the answer to a waiting outline review', requestBody: json(messageBody), responses: { 202: ok('Accepted'), 200: ok('A duplicate answer, not applied'), 404: error, 409: error } },
      },
      '/api/sessions/{id}/steps': { ...session, get: { summary: 'The journal; include=prompts adds each LLM step\'s prompts and output', parameters: [query('phase', 'only this phase'), query('include', 'prompts')], responses: { 200: ok('Steps'), 404: error } } },
      '/api/sessions/{id}/steps/{runId}/{key}': { parameters: [idParameter, { name: 'runId', in: 'path', required: true, schema: { type: 'string' } }, { name: 'key', in: 'path', required: true, schema: { type: 'string' }, description: 'URL-encoded step key' }], get: { summary: 'One step with its prompt and output', responses: { 200: ok('The step'), 404: error } } },
      '/api/sessions/{id}/sources': { ...session, get: { summary: 'Sources with citation numbers', responses: { 200: ok('Sources'), 404: error } } },
      '/api/sessions/{id}/export': { ...session, get: { summary: 'Export as md, html, json or legacy-json', parameters: [query('format', 'md | html | json | legacy-json')], responses: { 200: ok('The file'), 404: error } } },
      '/api/sessions/{id}/events': { ...session, get: { summary: 'Server-Sent Events; id is the event offset; Last-Event-ID or ?after= replays what was missed', parameters: [query('after', 'offset to start after')], responses: { 200: { description: 'text/event-stream' }, 404: error } } },
      '/api/openapi.json': { get: { summary: 'This document', responses: { 200: ok('OpenAPI 3.1') } } },
      '/v1/models': { get: { summary: 'OpenAI-compatible model list (one model: quarry)', responses: { 200: ok('Models') } } },
      '/v1/chat/completions': { post: { summary: 'OpenAI-compatible chat: a conversation drives a research session', requestBody: json(chatCompletionBody), responses: { 200: ok('A completion, or an SSE stream of chunks'), 400: error } } },
    },
  };
}
