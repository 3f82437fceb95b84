import { type ResponseState, responseId } from '../service/responses.ts';
import type { StoredEvent } from '../shared/events.ts';
import { StreamedText } from '../shared/streamed-text.ts';

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
      return event.data.offset === 0 && event.data.title ? `Writing: ${event.data.title}\n` : null;
    case 'index-progress':
      return event.data.done === event.data.total ? `Indexed ${event.data.total} documents\n` : null;
    case 'step-retry':
      // An outage is a state every client sees while it lasts (issue 45).
      return `Waiting: ${event.data.error.message.replace(/\.$/, '')}; try ${event.data.attempt + 1} in ${Math.max(1, Math.round(event.data.delayMs / 1000))} s\n`;
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

/**
 * The research's progress as the reasoning summary: the notes of the turn's events until its answer
 * starts to stream (from then on the answer itself shows the progress).
 */
function summaryOf(events: StoredEvent[]): string {
  const first = events.findIndex((event) => event.type === 'report-delta' && event.data.message);
  return (first < 0 ? events : events.slice(0, first)).map(progressNote).filter(Boolean).join('');
}

/** The response object: its status, its output (the research's progress as reasoning, then the answer). */
export function responseObject(state: ResponseState, events: StoredEvent[]): ResponseObject {
  const summary = summaryOf(events);
  const output: unknown[] = [];
  const reasoningDone = state.ended || events.some((event) => event.type === 'report-delta' && event.data.message);
  if (summary) output.push(reasoningItem(state, summary, reasoningDone ? 'completed' : 'in_progress'));
  if (state.text !== null) output.push(messageItem(state, state.text, 'completed'));
  return {
    id: ids(state).response,
    object: 'response',
    created_at: Math.floor(state.createdAt / 1000),
    completed_at: state.ended ? Math.floor(state.ended.createdAt / 1000) : null,
    status: state.status,
    background: state.client.background ?? false,
    error: state.error ? { code: state.error.code, message: state.error.message } : null,
    incomplete_details: state.status === 'cancelled' ? { reason: 'cancelled' } : null,
    // This turn's own instructions, else the session's (a new research's become its system instruction).
    instructions: state.client.instructions ?? (state.session.settings.systemInstruction as string | undefined) ?? null,
    metadata: state.client.metadata ?? {},
    model: RESPONSES_MODEL,
    output,
    // The answer's text, as the SDKs' convenience property has it, for clients reading plain JSON.
    output_text: state.text ?? '',
    parallel_tool_calls: false,
    previous_response_id: state.client.previousResponseId ?? null,
    store: true,
    temperature: (state.session.settings.temperature as number | undefined) ?? null,
    text: { format: { type: 'text' } },
    tool_choice: 'none',
    tools: [],
    top_p: null,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    max_output_tokens: null,
    max_tool_calls: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    truncation: 'disabled',
    user: null,
    safety_identifier: null,
    prompt_cache_key: null,
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
  private reasoningClosed = false;
  /** The answer as streamed so far (its message item is open once this is not null). */
  private sent: string | null = null;
  private readonly streamed = new StreamedText();

  constructor(private readonly initial: ResponseState) {}

  private emit(type: string, body: Record<string, unknown>): ResponseStreamEvent {
    return { type, sequence_number: this.sequence++, ...body };
  }

  /** The stream's first event. */
  created(): ResponseStreamEvent[] {
    const response = { ...responseObject(this.initial, []), status: 'queued', output: [] };
    return [this.emit('response.created', { response })];
  }

  private get messageIndex(): number {
    return this.summary ? 1 : 0;
  }

  private closeReasoning(state: ResponseState): ResponseStreamEvent[] {
    if (this.reasoningClosed || !this.summary) {
      this.reasoningClosed = true;
      return [];
    }
    this.reasoningClosed = true;
    const item_id = ids(state).reasoning;
    const part = { type: 'summary_text', text: this.summary };
    return [
      this.emit('response.reasoning_summary_text.done', {
        item_id,
        output_index: 0,
        summary_index: 0,
        text: this.summary,
      }),
      this.emit('response.reasoning_summary_part.done', { item_id, output_index: 0, summary_index: 0, part }),
      this.emit('response.output_item.done', {
        output_index: 0,
        item: reasoningItem(state, this.summary, 'completed'),
      }),
    ];
  }

  private openMessage(state: ResponseState): ResponseStreamEvent[] {
    if (this.sent !== null) return [];
    this.sent = '';
    const item_id = ids(state).message;
    return [
      this.emit('response.output_item.added', {
        output_index: this.messageIndex,
        item: messageItem(state, null, 'in_progress'),
      }),
      this.emit('response.content_part.added', {
        item_id,
        output_index: this.messageIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    ];
  }

  private textDelta(state: ResponseState, delta: string): ResponseStreamEvent {
    this.sent += delta;
    const where = { item_id: ids(state).message, output_index: this.messageIndex, content_index: 0 };
    return this.emit('response.output_text.delta', { ...where, delta, logprobs: [] });
  }

  /** What one stored event of the turn adds to the stream (the ending event is handed to `end`). */
  next(event: StoredEvent): ResponseStreamEvent[] {
    const out: ResponseStreamEvent[] = [];
    if (event.type === 'run-start' && !this.started) {
      this.started = true;
      const response = { ...responseObject(this.initial, []), status: 'in_progress', output: [] };
      out.push(this.emit('response.in_progress', { response }));
    }
    if (event.type === 'report-delta') {
      // The answer as it is written: the reasoning closes, the message opens, its text streams.
      if (!event.data.message) return out;
      this.streamed.apply(event.data);
      const text = this.streamed.text;
      out.push(...this.closeReasoning(this.initial), ...this.openMessage(this.initial));
      // A step that started over with other text streams no more; the done event carries the answer.
      if (text.startsWith(this.sent!) && text.length > this.sent!.length)
        out.push(this.textDelta(this.initial, text.slice(this.sent!.length)));
      return out;
    }
    const note = this.reasoningClosed ? null : progressNote(event);
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
    const out: ResponseStreamEvent[] = [...this.closeReasoning(state)];
    if (state.text !== null) {
      const text = state.text;
      out.push(...this.openMessage(state));
      // What the finished answer adds to what streamed (its checks, its sources).
      if (text.startsWith(this.sent!) && text.length > this.sent!.length)
        for (const delta of text.slice(this.sent!.length).match(/[\s\S]{1,1000}/g) ?? [])
          out.push(this.textDelta(state, delta));
      const where = { item_id: ids(state).message, output_index: this.messageIndex, content_index: 0 };
      annotations(text, state.citations).forEach((annotation, annotation_index) => {
        out.push(this.emit('response.output_text.annotation.added', { ...where, annotation_index, annotation }));
      });
      out.push(this.emit('response.output_text.done', { ...where, text, logprobs: [] }));
      const part = (messageItem(state, text, 'completed').content as unknown[])[0];
      out.push(this.emit('response.content_part.done', { ...where, part }));
      out.push(
        this.emit('response.output_item.done', {
          output_index: this.messageIndex,
          item: messageItem(state, text, 'completed'),
        }),
      );
    }
    if (state.text === null && this.sent !== null) {
      // It failed or stopped while its answer streamed: the message ends incomplete.
      const where = { item_id: ids(state).message, output_index: this.messageIndex, content_index: 0 };
      out.push(this.emit('response.output_text.done', { ...where, text: this.sent, logprobs: [] }));
      out.push(
        this.emit('response.output_item.done', {
          output_index: this.messageIndex,
          item: messageItem(state, this.sent, 'incomplete'),
        }),
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
