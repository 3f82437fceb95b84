import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeHttpServer, type RecordedRequest } from '../../../test/support/fake-http-server.ts';
import { testConfig } from '../../../test/support/test-config.ts';
import { ManualClock } from '../../shared/clock.ts';
import { BraveSearch } from './brave/brave-search.ts';
import { createWebProvider } from './create-search-providers.ts';
import { ExaSearch } from './exa/exa-search.ts';
import type { HttpSearch } from './http-search.ts';
import { JinaSearch } from './jina/jina-search.ts';
import { SearchError } from './search-error.ts';
import { SearxngSearch } from './searxng/searxng-search.ts';
import { TavilySearch } from './tavily/tavily-search.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/search/${name}.json`, import.meta.url), 'utf8')) as unknown;

interface ProviderSpec {
  name: string;
  make(baseUrl: string): HttpSearch;
  /** The documented request: method, path, auth and parameters. */
  checkRequest(request: RecordedRequest): void;
}

// Waits go to a manual clock: the retry tests check what was waited, without sleeping.
let clock = new ManualClock();
const fast = () => ({ retries: 2, maxRetryDelayMs: 1_500, clock });

const specs: ProviderSpec[] = [
  {
    name: 'searxng',
    make: (baseUrl) => new SearxngSearch(`${baseUrl}/searx/`, fast()),
    checkRequest(request) {
      expect(request.method).toBe('GET');
      expect(request.url.pathname).toBe('/searx/search');
      expect(request.url.searchParams.get('format')).toBe('json');
      expect(request.url.searchParams.get('q')).toBe('tidal power');
    },
  },
  {
    name: 'tavily',
    make: (baseUrl) => new TavilySearch('tvly-test-key', baseUrl, fast()),
    checkRequest(request) {
      expect(request.method).toBe('POST');
      expect(request.url.pathname).toBe('/search');
      expect(request.headers.authorization).toBe('Bearer tvly-test-key');
      expect(JSON.parse(request.body)).toMatchObject({ query: 'tidal power', max_results: 5 });
    },
  },
  {
    name: 'brave',
    make: (baseUrl) => new BraveSearch('brave-test-key', baseUrl, fast()),
    checkRequest(request) {
      expect(request.method).toBe('GET');
      expect(request.url.pathname).toBe('/res/v1/web/search');
      expect(request.headers['x-subscription-token']).toBe('brave-test-key');
      expect(request.url.searchParams.get('q')).toBe('tidal power');
      expect(request.url.searchParams.get('count')).toBe('5');
    },
  },
  {
    name: 'exa',
    make: (baseUrl) => new ExaSearch('exa-test-key', baseUrl, fast()),
    checkRequest(request) {
      expect(request.method).toBe('POST');
      expect(request.url.pathname).toBe('/search');
      expect(request.headers['x-api-key']).toBe('exa-test-key');
      expect(JSON.parse(request.body)).toMatchObject({
        query: 'tidal power',
        numResults: 5,
        contents: { text: expect.anything() },
      });
    },
  },
  {
    name: 'jina',
    make: (baseUrl) => new JinaSearch('jina-test-key', baseUrl, fast()),
    checkRequest(request) {
      expect(request.method).toBe('GET');
      expect(request.headers.authorization).toBe('Bearer jina-test-key');
      expect(request.headers.accept).toBe('application/json');
      expect(request.url.searchParams.get('q')).toBe('tidal power');
    },
  },
];

for (const spec of specs) {
  describe(`${spec.name} search adapter`, () => {
    let server: FakeHttpServer;
    beforeEach(async () => {
      clock = new ManualClock();
      server = await new FakeHttpServer().start();
    });
    afterEach(async () => {
      await server.stop();
      expect(server.unscripted).toEqual([]);
    });

    it('sends the documented request and reads the documented response', async () => {
      server.script({ body: fixture(spec.name) });
      const results = await spec.make(server.baseUrl).search('tidal power', { maxResults: 5 });
      spec.checkRequest(server.requests[0]!);
      expect(results.map((result) => [result.url, result.title])).toEqual([
        ['https://en.wikipedia.org/wiki/Tidal_power', 'Tidal power - Wikipedia'],
        ['https://www.example.org/la-rance', 'La Rance Tidal Power Station'],
      ]);
      expect(results[0]!.snippet).toMatch(/^Tidal power or tidal energy is harnessed/);
      expect(results.every((result) => result.provider === spec.name)).toBe(true);
    });

    it('waits as Retry-After says on 429, then succeeds', async () => {
      server.script(
        { status: 429, headers: { 'retry-after': '1' }, body: { error: 'rate limited' } },
        { body: fixture(spec.name) },
      );
      const results = await spec.make(server.baseUrl).search('tidal power', { maxResults: 5 });
      expect(results).toHaveLength(2);
      expect(clock.waits).toEqual([1000]);
      expect(server.requests).toHaveLength(2);
    });

    it('reports server errors as retryable once its retries are spent', async () => {
      server.script(
        { status: 502, body: 'bad gateway' },
        { status: 503, body: 'unavailable' },
        { status: 500, body: 'boom' },
      );
      const error = await spec
        .make(server.baseUrl)
        .search('tidal power', { maxResults: 5 })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SearchError);
      expect(error).toMatchObject({ isRetryable: true, status: 500, provider: spec.name });
      expect(server.requests).toHaveLength(3);
      expect(clock.waits).toEqual([500, 1000]);
    });

    it('reports a rejected key as not retryable, without retrying', async () => {
      server.script({ status: 401, body: { error: 'invalid api key' } });
      const error = await spec
        .make(server.baseUrl)
        .search('tidal power', { maxResults: 5 })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({
        isRetryable: false,
        status: 401,
        message: expect.stringContaining('check the API key'),
      });
      expect(server.requests).toHaveLength(1);
    });

    it('reports a malformed response clearly', async () => {
      server.script({ body: { unexpected: true } });
      await expect(spec.make(server.baseUrl).search('tidal power', { maxResults: 5 })).rejects.toMatchObject({
        isRetryable: false,
        message: expect.stringContaining('unexpected response shape'),
      });
    });
  });
}

describe('web provider configuration', () => {
  it('takes keys from the resolved configuration and names a missing one', () => {
    expect(() => createWebProvider('tavily', testConfig().providers)).toThrow(/TAVILY_API_KEY/);
    expect(() => createWebProvider('altavista', testConfig().providers)).toThrow(/Unknown search provider/);
    expect(createWebProvider('brave', testConfig({ BRAVE_API_KEY: 'k' }).providers).name).toBe('brave');
  });
});
