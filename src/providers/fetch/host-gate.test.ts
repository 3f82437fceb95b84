import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.ts';
import { parseRetryAfter } from '../../shared/retry.ts';
import { fetchPage } from './fetch-page.ts';
import { HostGate } from './host-gate.ts';

/** A site that answers slowly, records when each request started and how many were in flight. */
function politeSite() {
  const starts: number[] = [];
  let inFlight = 0;
  let most = 0;
  let limited = 1;
  const server = createServer((request, response) => {
    starts.push(performance.now());
    inFlight += 1;
    most = Math.max(most, inFlight);
    const end = (status: number, headers: Record<string, string>, body: string) =>
      setTimeout(() => {
        inFlight -= 1;
        response.writeHead(status, headers).end(body);
      }, 60);
    if (request.url === '/limited' && limited-- > 0) return end(429, { 'retry-after': '1' }, 'slow down');
    end(200, { 'content-type': 'text/plain' }, `page ${request.url}`);
  });
  return { server, starts, most: () => most };
}

describe('fetching politely', () => {
  const site = politeSite();
  let base = '';
  const allow = ['127.0.0.1'];

  beforeAll(async () => {
    await new Promise<void>((resolve) => site.server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => (site.server as Server).close(resolve));
  });

  it('keeps at most two requests in flight to one host, each start a step after the last', async () => {
    const clock = new ManualClock(1_000);
    const gate = new HostGate({ perHost: 2, intervalMs: 100, clock });
    const started: number[] = [];
    const pages = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        gate.run('127.0.0.1', async () => {
          started.push(clock.now());
          return fetchPage(`${base}/page-${index}`, { allow });
        }),
      ),
    );
    expect(pages.map((page) => page.document.text)).toEqual(
      Array.from({ length: 6 }, (_, index) => `page /page-${index}`),
    );
    expect(site.most()).toBeLessThanOrEqual(2);
    for (const [index, start] of started.entries())
      if (index > 0) expect(start - started[index - 1]!).toBeGreaterThanOrEqual(100);
  });

  it('never makes another host wait', async () => {
    const clock = new ManualClock();
    const gate = new HostGate({ intervalMs: 100, clock });
    await gate.run('a.example', async () => undefined);
    await gate.run('b.example', async () => undefined);
    expect(clock.waits).toEqual([]);
  });

  it('pauses every fetch to a host that answered 429 with Retry-After', async () => {
    const clock = new ManualClock();
    const gate = new HostGate({ intervalMs: 0, clock });
    const refused = await fetchPage(`${base}/limited`, { allow, gate }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ isRetryable: true, retryAfterMs: 1000 });
    const page = await fetchPage(`${base}/after`, { allow, gate });
    expect(page.document.text).toBe('page /after');
    expect(clock.waits).toEqual([1000]);
  });

  it('reads Retry-After as seconds or as a date, and ignores what it cannot read', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(undefined)).toBeNull();
    expect(parseRetryAfter('99999')).toBe(600_000);
  });
});
