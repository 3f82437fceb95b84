import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeHttpServer } from '../../../test/support/fake-http-server.ts';
import { minimalPdf } from '../../../test/support/minimal-pdf.ts';
import { fetchPage } from './fetch-page.ts';

const article = `<!doctype html><html><head><title>Tides | Example News</title>
<meta name="author" content="Rae Writer"><meta property="article:published_time" content="2024-05-01T10:00:00Z"></head>
<body><nav>Menu</nav><article><h1>Why the tides rise</h1>
<p>The Moon's gravity pulls the oceans into two bulges, one facing the Moon and one on the far side of the Earth.
As the Earth turns, a coast passes through both bulges, which is why most places see two high tides a day.</p>
<p>When the Sun and the Moon line up, at new and full moon, their pulls add up and the tides are largest: these
are the spring tides. At the quarter moons they partly cancel and the neap tides are smallest.</p>
<p>An attacker wrote <code>&lt;script&gt;alert(1)&lt;/script&gt;</code> here as text.</p></article>
<script>document.write('tracking')</script></body></html>`;

describe('fetchPage', () => {
  let server: FakeHttpServer;
  const allow = ['127.0.0.1'];

  beforeAll(async () => {
    server = await new FakeHttpServer().start((request, response) => {
      const path = request.url.pathname;
      const send = (status: number, headers: Record<string, string>, body: string | Buffer = '') => {
        response.writeHead(status, headers).end(body);
        return true;
      };
      if (path === '/article') return send(200, { 'content-type': 'text/html; charset=utf-8' }, article);
      if (path === '/article.gz')
        return send(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }, gzipSync(article));
      if (path === '/paper.pdf')
        return send(
          200,
          { 'content-type': 'application/pdf' },
          minimalPdf('Tidal Streams', ['Tidal stream turbines sit on the seabed.', 'They turn with the current.']),
        );
      if (path === '/notes.txt') return send(200, { 'content-type': 'text/plain' }, 'plain notes');
      if (path === '/image.png') return send(200, { 'content-type': 'image/png' }, Buffer.from([0x89, 0x50]));
      if (path === '/huge') return send(200, { 'content-type': 'text/plain' }, 'x'.repeat(200_000));
      if (path === '/missing') return send(404, { 'content-type': 'text/plain' }, 'not here');
      if (path === '/broken') return send(503, { 'content-type': 'text/plain' }, 'down');
      if (path.startsWith('/hop/')) {
        const left = Number(path.split('/')[2]);
        return send(302, { location: left > 0 ? `/hop/${left - 1}` : '/article' });
      }
      if (path === '/to-loopback') return send(302, { location: `${server.baseUrl}/article` });
      if (path === '/to-metadata') return send(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      if (path === '/slow') {
        setTimeout(() => send(200, { 'content-type': 'text/plain' }, 'late'), 2_000);
        return true;
      }
      return false;
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('extracts the main text of an HTML page as Markdown, with title, byline and date', async () => {
    const page = await fetchPage(`${server.baseUrl}/article`, { allow });
    expect(page).toMatchObject({
      status: 200,
      finalUrl: `${server.baseUrl}/article`,
      document: { kind: 'html', byline: 'Rae Writer', publishedAt: '2024-05-01T10:00:00.000Z' },
    });
    expect(page.document.title).toBe('Why the tides rise');
    expect(page.document.text).toContain('two high tides a day');
    expect(page.document.text).toContain('spring tides');
    expect(page.document.text).not.toContain('Menu');
    expect(page.document.text).not.toContain('tracking');
    expect(page.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads gzip bodies, PDFs and plain text', async () => {
    expect((await fetchPage(`${server.baseUrl}/article.gz`, { allow })).document.text).toContain('spring tides');
    const pdf = await fetchPage(`${server.baseUrl}/paper.pdf`, { allow });
    expect(pdf.document).toMatchObject({ kind: 'pdf', title: 'Tidal Streams' });
    expect(pdf.document.text).toContain('seabed');
    expect((await fetchPage(`${server.baseUrl}/notes.txt`, { allow })).document.text).toBe('plain notes');
  });

  it('follows redirects up to the cap', async () => {
    expect((await fetchPage(`${server.baseUrl}/hop/3`, { allow })).finalUrl).toBe(`${server.baseUrl}/article`);
    await expect(fetchPage(`${server.baseUrl}/hop/3`, { allow, maxRedirects: 2 })).rejects.toMatchObject({
      message: expect.stringContaining('more than 2 redirects'),
      isRetryable: false,
    });
  });

  it('caps the body size, the time, and refuses unsupported types and HTTP errors', async () => {
    await expect(fetchPage(`${server.baseUrl}/huge`, { allow, maxBytes: 100_000 })).rejects.toMatchObject({
      message: expect.stringMatching(/limit (is|of) 100000/),
      isRetryable: false,
    });
    await expect(fetchPage(`${server.baseUrl}/slow`, { allow, totalTimeoutMs: 300 })).rejects.toMatchObject({
      message: expect.stringContaining('within 300 ms'),
      isRetryable: true,
    });
    await expect(fetchPage(`${server.baseUrl}/image.png`, { allow })).rejects.toMatchObject({
      message: expect.stringContaining('unsupported content type "image/png"'),
    });
    await expect(fetchPage(`${server.baseUrl}/missing`, { allow })).rejects.toMatchObject({
      message: expect.stringContaining('HTTP 404'),
      isRetryable: false,
    });
    await expect(fetchPage(`${server.baseUrl}/broken`, { allow })).rejects.toMatchObject({
      message: expect.stringContaining('HTTP 503'),
      isRetryable: true,
    });
    await expect(fetchPage('ftp://example.org/file', { allow })).rejects.toMatchObject({
      message: expect.stringContaining('only http and https'),
    });
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user stopped')), 100);
    await expect(fetchPage(`${server.baseUrl}/slow`, { allow, signal: controller.signal })).rejects.toThrow(
      'user stopped',
    );
  });

  it('refuses loopback, private, link-local and metadata addresses unless allowed', async () => {
    const port = new URL(server.baseUrl).port;
    await expect(fetchPage(`${server.baseUrl}/article`)).rejects.toMatchObject({
      message: expect.stringContaining('Refusing to fetch 127.0.0.1'),
      isRetryable: false,
    });
    await expect(fetchPage(`http://localhost:${port}/article`)).rejects.toMatchObject({
      message: expect.stringMatching(/Refusing to fetch localhost: it resolves to (127\.0\.0\.1|::1)/),
    });
    await expect(fetchPage('http://10.0.0.1/')).rejects.toMatchObject({
      message: expect.stringContaining('Refusing to fetch 10.0.0.1'),
    });
    await expect(fetchPage('http://169.254.169.254/latest/meta-data/')).rejects.toMatchObject({
      message: expect.stringContaining('Refusing'),
    });
    await expect(fetchPage('http://[::ffff:10.1.2.3]/')).rejects.toMatchObject({
      message: expect.stringContaining('Refusing'),
    });
  });

  it('never reuses a connection an allowed fetch kept open for a fetch that refuses its host', async () => {
    const port = new URL(server.baseUrl).port;
    // Whichever test ran before: a socket to localhost kept alive under `allow: ['localhost']`.
    expect((await fetchPage(`http://localhost:${port}/article`, { allow: ['localhost'] })).document.title).toBe(
      'Why the tides rise',
    );
    await expect(fetchPage(`http://localhost:${port}/article`)).rejects.toMatchObject({
      message: expect.stringMatching(/Refusing to fetch localhost/),
    });
  });

  it('checks every redirect hop: an allowed host cannot redirect into a blocked address', async () => {
    const port = new URL(server.baseUrl).port;
    // "localhost" is allowed by name; the redirect target 127.0.0.1 is not.
    await expect(fetchPage(`http://localhost:${port}/to-loopback`, { allow: ['localhost'] })).rejects.toMatchObject({
      message: expect.stringContaining('Refusing to fetch 127.0.0.1'),
    });
    await expect(fetchPage(`${server.baseUrl}/to-metadata`, { allow })).rejects.toMatchObject({
      message: expect.stringContaining('Refusing to fetch 169.254.169.254'),
    });
  });
});
