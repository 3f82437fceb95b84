import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerMetrics } from './metrics.ts';
import { metricsRefusal } from './metrics-access.ts';

/**
 * `/metrics` on a port of its own, for a process without the HTTP API (a worker), bound to the
 * address the operator names. The same rule as the server's `/metrics`: the token when one is set,
 * else a direct scraper on this machine or a private network.
 */
export async function serveMetrics(
  metrics: ServerMetrics,
  options: { host: string; port: number; token: string | null },
): Promise<{ url: string; close(): void }> {
  const server = createServer((request, response) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.url !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics here.\n');
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    const refusal = metricsRefusal(
      { authorization: request.headers.authorization, headers, peer: request.socket.remoteAddress ?? null },
      { token: options.token, publicNames: new Set() },
    );
    if (refusal) {
      response
        .writeHead(refusal.status, {
          'content-type': 'text/plain',
          ...(refusal.status === 401 ? { 'www-authenticate': 'Bearer realm="metrics"' } : {}),
        })
        .end(`${refusal.message}\n`);
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('The metrics could not be collected.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address() as AddressInfo;
  return { url: `http://${options.host}:${address.port}/metrics`, close: () => server.close() };
}
