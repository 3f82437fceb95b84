import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { within } from './bounds.ts';

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  temperature?: number;
  /** `json_schema` (structured outputs) or `json_object` (JSON mode), as OpenAI's Chat Completions take it. */
  response_format?: { type: string; json_schema?: { name?: string; schema?: unknown; strict?: boolean } };
}

export interface LoggedCall {
  request: ChatRequest;
  reply: string;
}

/** Decides the reply text for a request; throwing answers 500 (or the error's `status`). */
export type Responder = (request: ChatRequest, call: number) => string;

/**
 * A local OpenAI-compatible server (`POST /v1/chat/completions`, JSON and SSE streaming with usage)
 * that answers through a responder and logs every call. Anything else is 404 and counted as
 * unexpected, so tests fail on requests they did not plan for.
 */
export class FakeOpenAiServer {
  readonly calls: LoggedCall[] = [];
  readonly unexpected: string[] = [];
  baseUrl = '';
  private server: Server | null = null;
  /** Requests that have arrived (answered or held). */
  private arrived = 0;
  private holdFrom: number | null = null;
  private holdMatching: ((request: ChatRequest) => boolean) | null = null;
  private held: (() => void)[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly respond: Responder,
    private readonly options: { delayMs?: number } = {},
  ) {}

  async start(port = 0): Promise<this> {
    this.server = createServer(async (incoming, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      if (incoming.method !== 'POST' || !incoming.url?.endsWith('/chat/completions')) {
        this.unexpected.push(`${incoming.method} ${incoming.url}`);
        response.writeHead(404).end();
        return;
      }
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      this.arrived += 1;
      if ((this.holdFrom !== null && this.arrived > this.holdFrom) || this.holdMatching?.(request)) {
        const released = new Promise<void>((resolve) => this.held.push(resolve));
        for (const wake of this.waiters) wake();
        await released;
      }
      let reply: string;
      try {
        reply = this.respond(request, this.calls.length);
      } catch (error) {
        response
          .writeHead((error as { status?: number }).status ?? 500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: (error as Error).message } }));
        return;
      }
      if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
      this.calls.push({ request, reply });
      const promptTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
      const completionTokens = Math.ceil(reply.length / 4);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      };
      const base = { id: `chatcmpl-${this.calls.length}`, created: 1_700_000_000, model: request.model };
      if (!request.stream) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
            usage,
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (payload: unknown) => response.write(`data: ${JSON.stringify(payload)}\n\n`);
      send({
        ...base,
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      });
      for (const piece of reply.match(/[\s\S]{1,24}/g) ?? [])
        send({
          ...base,
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
        });
      send({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      send({ ...base, object: 'chat.completion.chunk', choices: [], usage });
      response.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /**
   * Answers the next `calls` requests, then holds every later one unanswered until `release()`: a
   * test can act while a run is mid-way (kill it, stop it), however fast or slow the machine.
   */
  holdAfter(calls: number): void {
    this.holdFrom = this.arrived + calls;
  }

  /** Holds every request `matches` picks (a step of one kind) until `release()`. */
  holdWhen(matches: (request: ChatRequest) => boolean): void {
    this.holdMatching = matches;
  }

  /** Answers the held requests and every later one at once. */
  release(): void {
    this.holdFrom = null;
    this.holdMatching = null;
    for (const resume of this.held.splice(0)) resume();
  }

  /** Resolves once a request is being held (the run is waiting on the model); fails after `timeoutMs`. */
  async waitUntilHeld(timeoutMs = within(12_000)): Promise<void> {
    const held = () => this.held.length > 0;
    if (held()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no request was held within ${timeoutMs} ms (${this.arrived} arrived)`));
      }, timeoutMs);
      const check = () => {
        if (!held()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The system prompt of a request. */
export function systemOf(request: ChatRequest): string {
  return request.messages.find((message) => message.role === 'system')?.content ?? '';
}

/** The last user message of a request. */
export function lastUserOf(request: ChatRequest): string {
  return [...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
}
