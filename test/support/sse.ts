import { expect } from 'vitest';

/** One Server-Sent Events frame: `id` is NaN when the frame has none. */
export interface SseEvent {
  id: number;
  event: string;
  data: any;
}

/** Reads SSE frames until `stop` says so (or the stream ends); then disconnects. A `body` is POSTed as JSON. */
export async function readSse(
  url: string,
  headers: Record<string, string>,
  stop: (events: SseEvent[]) => boolean,
  body?: unknown,
): Promise<SseEvent[]> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    signal: controller.signal,
    ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  try {
    while (!stop(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          frame
            .split('\n')
            .filter((line) => line && !line.startsWith(':'))
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
        );
        if (fields.data)
          events.push({ id: Number(fields.id), event: fields.event ?? 'message', data: JSON.parse(fields.data) });
        if (stop(events)) break;
      }
    }
  } finally {
    controller.abort();
  }
  return events;
}
