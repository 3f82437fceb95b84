import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering (ms). */
  delayMs?: number;
}

/**
 * A local HTTP server on 127.0.0.1 that answers from a script, records every request, and answers
 * anything unscripted with 599 (and remembers it), so a test fails on a request it did not expect.
 */
export class FakeHttpServer {
  readonly requests: RecordedRequest[] = [];
  readonly unscripted: RecordedRequest[] = [];
  private readonly queue: ScriptedResponse[] = [];
  private server: Server | null = null;
  baseUrl = '';

  /** Answers the next requests, in order. */
  script(...responses: ScriptedResponse[]): this {
    this.queue.push(...responses);
    return this;
  }

  async start(
    handler?: (request: RecordedRequest, response: ServerResponse) => boolean | Promise<boolean>,
  ): Promise<this> {
    this.server = createServer(async (incoming, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const request: RecordedRequest = {
        method: incoming.method ?? 'GET',
        url: new URL(incoming.url ?? '/', this.baseUrl),
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      this.requests.push(request);
      if (handler && (await handler(request, response))) return;
      const next = this.queue.shift();
      if (!next) {
        this.unscripted.push(request);
        response.writeHead(599, { 'content-type': 'text/plain' }).end('unscripted request');
        return;
      }
      if (next.delayMs) await new Promise((resolve) => setTimeout(resolve, next.delayMs));
      const body =
        typeof next.body === 'string' || Buffer.isBuffer(next.body) ? next.body : JSON.stringify(next.body ?? {});
      response.writeHead(next.status ?? 200, { 'content-type': 'application/json', ...next.headers }).end(body);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
