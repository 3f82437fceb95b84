import { type ResponseState, responseId } from '../service/responses.ts';
import type { StoredEvent } from '../shared/events.ts';

/**
 * Quarry's turns in the OpenAI Responses API's words: the response object and its stream events.
 * Pure functions of a turn's stored events and state, so a stream replayed from the start numbers
 * its events the same way every time, and `starting_after` resumes it exactly.
 */

export const RESPONSES_MODEL = 'quarry';

export type ResponseObject = Record<string, unknown> & { id: string; status: string };
export type ResponseStreamEvent = Record<string, unknown> & { type: string; sequence_number: number };

/** One line of research progress, in words a reader follows (the reasoning summary); null: nothing to say. */
export function progressNote(event: StoredEvent): string | null {
  switch (event.type) {
    case 'phase-start':
      return `${event.data.phase[0]!.toUpperCase()}${event.data.phase.slice(1)}…\n`;
    case 'step-start': {
      const query = (event.data.input as { query?: unknown } | null)?.query;
      return event.data.phase === 'search' && typeof query === 'string' ? `Searching: ${query}\n` : null;
    }
    case 'source-found':
      return `Reading: ${event.data.title}\n`;
    case 'findings-update':
      return `Findings so far: ${event.data.summary}\n`;
    case 'report-delta':
      return `Writing: ${event.data.title}\n`;
    case 'index-progress':
      return event.data.done === event.data.total ? `Indexed ${event.data.total} documents\n` : null;
    default:
      return null;
  }
}

const ids = (state: Pick<ResponseState, 'handle'>) => {
  const id = responseId(state.handle);
  return { response: id, reasoning: `rs_${id.slice(5)}`, message: `msg_${id.slice(5)}` };
};

/** `[n]` markers that name a cited source, as `url_citation` annotations over the marker. */
export function annotations(text: string, citations: ResponseState['citations']) {
  const found: { type: 'url_citation'; start_index: number; end_index: number; url: string; title: string }[] = [];
  for (const match of text.matchAll(/\[(\d{1,4})\]/g)) {
    const source = citations.get(Number(match[1]));
    if (!source) continue;
    found.push({
      type: 'url_citation',
      start_index: match.index,
      end_index: match.index + match[0].length,
      url: source.url,
      title: source.title,
    });
  }
  return found;
}

function reasoningItem(state: ResponseState, summary: string, status: string) {
  return {
    id: ids(state).reasoning,
    type: 'reasoning',
    status,
    summary: summary ? [{ type: 'summary_text', text: summary }] : [],
  };
}

function messageItem(state: ResponseState, text: string | null, status: string) {
  return {
    id: ids(state).message,
    type: 'message',
    role: 'assistant',
    status,
    content:
      text === null
        ? []
        : [{ type: 'output_text', text, annotations: annotations(text, state.citations), logprobs: [] }],
  };
}

/** The response object: its status, its output (the research's progress as reasoning, then the answer). */
export function responseObject(state: ResponseState, events: StoredEvent[]): ResponseObject {
  const summary = events.map(progressNote).filter(Boolean).join('');
  const output: unknown[] = [];
  if (summary) output.push(reasoningItem(state, summary, state.ended ? 'completed' : 'in_progress'));
  if (state.text !== null) output.push(messageItem(state, state.text, 'completed'));
  return {
    id: ids(state).response,
    object: 'response',
    created_at: Math.floor(state.createdAt / 1000),
    status: state.status,
    background: state.client.background ?? false,
    error: state.error ? { code: state.error.code, message: state.error.message } : null,
    incomplete_details: state.status === 'cancelled' ? { reason: 'cancelled' } : null,
    instructions: (state.session.settings.systemInstruction as string | undefined) ?? null,
    metadata: state.client.metadata ?? {},
    model: RESPONSES_MODEL,
    output,
    parallel_tool_calls: false,
    previous_response_id: state.client.previousResponseId ?? null,
    store: true,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: state.usage && {
      input_tokens: state.usage.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: state.usage.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: state.usage.inputTokens + state.usage.outputTokens,
    },
    // Quarry's own: the session this response is a turn of.
    quarry_session_id: state.session.id,
  };
}

/**
 * Builds a turn's stream events, numbered from 0 in order. Feed it the turn's stored events as they
 * come, then the final state once the turn has ended; it returns the Responses events each produces.
 */
export class ResponseEventWriter {
  private sequence = 0;
  private started = false;
  private summary = '';

  constructor(private readonly initial: ResponseState) {}

  private emit(type: string, body: Record<string, unknown>): ResponseStreamEvent {
    return { type, sequence_number: this.sequence++, ...body };
  }

  /** The stream's first event. */
  created(): ResponseStreamEvent[] {
    const response = { ...responseObject(this.initial, []), status: 'queued', output: [] };
    return [this.emit('response.created', { response })];
  }

  /** What one stored event of the turn adds to the stream (the ending event is handed to `end`). */
  next(event: StoredEvent): ResponseStreamEvent[] {
    const out: ResponseStreamEvent[] = [];
    if (event.type === 'run-start' && !this.started) {
      this.started = true;
      const response = { ...responseObject(this.initial, []), status: 'in_progress', output: [] };
      out.push(this.emit('response.in_progress', { response }));
    }
    const note = progressNote(event);
    if (!note) return out;
    const item_id = ids(this.initial).reasoning;
    if (!this.summary) {
      out.push(
        this.emit('response.output_item.added', {
          output_index: 0,
          item: reasoningItem(this.initial, '', 'in_progress'),
        }),
      );
      out.push(
        this.emit('response.reasoning_summary_part.added', {
          item_id,
          output_index: 0,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        }),
      );
    }
    this.summary += note;
    out.push(
      this.emit('response.reasoning_summary_text.delta', { item_id, output_index: 0, summary_index: 0, delta: note }),
    );
    return out;
  }

  /** The stream's closing events, from the turn's final state and all its events. */
  end(state: ResponseState, events: StoredEvent[]): ResponseStreamEvent[] {
    const out: ResponseStreamEvent[] = [];
    let index = 0;
    if (this.summary) {
      const item_id = ids(state).reasoning;
      const part = { type: 'summary_text', text: this.summary };
      out.push(
        this.emit('response.reasoning_summary_text.done', {
          item_id,
          output_index: 0,
          summary_index: 0,
          text: this.summary,
        }),
      );
      out.push(this.emit('response.reasoning_summary_part.done', { item_id, output_index: 0, summary_index: 0, part }));
      out.push(
        this.emit('response.output_item.done', {
          output_index: 0,
          item: reasoningItem(state, this.summary, 'completed'),
        }),
      );
      index = 1;
    }
    if (state.text !== null) {
      const item_id = ids(state).message;
      const text = state.text;
      out.push(
        this.emit('response.output_item.added', { output_index: index, item: messageItem(state, null, 'in_progress') }),
      );
      const where = { item_id, output_index: index, content_index: 0 };
      out.push(
        this.emit('response.content_part.added', {
          ...where,
          part: { type: 'output_text', text: '', annotations: [] },
        }),
      );
      for (const delta of text.match(/[\s\S]{1,1000}/g) ?? [])
        out.push(this.emit('response.output_text.delta', { ...where, delta, logprobs: [] }));
      annotations(text, state.citations).forEach((annotation, annotation_index) => {
        out.push(this.emit('response.output_text.annotation.added', { ...where, annotation_index, annotation }));
      });
      out.push(this.emit('response.output_text.done', { ...where, text, logprobs: [] }));
      const part = (messageItem(state, text, 'completed').content as unknown[])[0];
      out.push(this.emit('response.content_part.done', { ...where, part }));
      out.push(
        this.emit('response.output_item.done', { output_index: index, item: messageItem(state, text, 'completed') }),
      );
    }
    const response = responseObject(state, events);
    const type =
      state.status === 'completed'
        ? 'response.completed'
        : state.status === 'failed'
          ? 'response.failed'
          : 'response.incomplete';
    out.push(this.emit(type, { response }));
    return out;
  }
}
