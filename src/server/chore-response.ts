import { randomUUID } from 'node:crypto';
import { RESPONSES_MODEL } from './responses-wire.ts';

/**
 * The answer to a client's housekeeping task (a title, tags, follow-up suggestions) as a response
 * that is not stored (`store: false`): it started no research, so there is no session to read it
 * from again, as with OpenAI's unstored responses.
 */
export function choreResponseObject(input: {
  text: string;
  usage: { inputTokens: number; outputTokens: number };
  instructions: string | null;
  metadata: Record<string, string>;
  /** The id and creation time of the stream that announced it (new ones otherwise). */
  id?: string;
  created?: number;
}) {
  const created = input.created ?? Math.floor(Date.now() / 1000);
  const id = input.id ?? randomUUID().replace(/-/g, '');
  return {
    id: `resp_chore_${id}`,
    object: 'response' as const,
    created_at: created,
    completed_at: Math.max(created, Math.floor(Date.now() / 1000)),
    status: 'completed' as const,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: input.instructions,
    metadata: input.metadata,
    model: RESPONSES_MODEL,
    output: [
      {
        id: `msg_chore_${id}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: input.text, annotations: [], logprobs: [] }],
      },
    ],
    output_text: input.text,
    parallel_tool_calls: false,
    previous_response_id: null,
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'none',
    tools: [],
    top_p: null,
    usage: {
      input_tokens: input.usage.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: input.usage.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input.usage.inputTokens + input.usage.outputTokens,
    },
  };
}

type ChoreResponse = ReturnType<typeof choreResponseObject>;

/**
 * A streamed housekeeping answer as the Responses stream events of an unstored response: created and
 * in progress (sent before the answer is asked for, from the response with no output yet), then the
 * message with its text, then completed.
 */
export function choreStreamOpening(pending: ChoreResponse) {
  const response = { ...pending, status: 'in_progress', completed_at: null, output: [], output_text: '', usage: null };
  return [
    { type: 'response.created', sequence_number: 0, response },
    { type: 'response.in_progress', sequence_number: 1, response },
  ];
}

export function choreStreamRest(response: ChoreResponse) {
  let sequence = 2;
  const emit = (type: string, body: Record<string, unknown>) => ({ type, sequence_number: sequence++, ...body });
  const message = response.output[0]!;
  const part = message.content[0]!;
  const at = { item_id: message.id, output_index: 0, content_index: 0 };
  return [
    emit('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } }),
    emit('response.content_part.added', { ...at, part: { ...part, text: '' } }),
    emit('response.output_text.delta', { ...at, delta: part.text, logprobs: [] }),
    emit('response.output_text.done', { ...at, text: part.text, logprobs: [] }),
    emit('response.content_part.done', { ...at, part }),
    emit('response.output_item.done', { output_index: 0, item: message }),
    emit('response.completed', { response }),
  ];
}
