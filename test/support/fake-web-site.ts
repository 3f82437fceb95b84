import { FakeHttpServer } from './fake-http-server.ts';

/** An article page as sites serve it: navigation, the article, a footer. */
function articlePage(title: string, paragraphs: string[]): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>
    <nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav>
    <article><h1>${title}</h1>${paragraphs.map((text) => `<p>${text}</p>`).join('\n')}</article>
    <footer>Copyright the example site. All rights reserved.</footer></body></html>`;
}

/** The site's pages by path. */
export const sitePages: Record<string, { title: string; paragraphs: string[] }> = {
  '/tidal': {
    title: 'How tidal barrages work',
    paragraphs: [
      'A tidal barrage is a dam built across the mouth of an estuary, and tidal power plants of this kind generate electricity from the difference in water height between the sea and the basin.',
      'As the tide rises, water flows through sluice gates into the basin; at high tide the gates close, and as the sea falls the trapped water is released through low-head turbines that drive generators.',
      'The Rance tidal power station in Brittany has produced electricity this way since 1966 with twenty-four bulb turbines.',
    ],
  },
  '/stream': {
    title: 'Tidal stream generators',
    paragraphs: [
      'Tidal stream generators work like underwater wind turbines: the moving water of tidal currents turns a rotor that drives a generator to produce electricity.',
      'Because water is about eight hundred times denser than air, a tidal turbine produces as much power as a far larger wind turbine.',
    ],
  },
};

/**
 * A small web on 127.0.0.1: a SearXNG JSON API at `/search` whose every query finds the site's
 * pages (with short snippets, so what a report quotes beyond them was read from the page), and
 * the pages themselves as HTML.
 */
export async function startFakeWebSite(): Promise<FakeHttpServer> {
  const site = new FakeHttpServer();
  await site.start((request, response) => {
    if (request.url.pathname === '/search') {
      const results = Object.entries(sitePages).map(([path, page]) => ({
        url: `${site.baseUrl}${path}`,
        title: page.title,
        content: `${page.title} (${request.url.searchParams.get('q')})`,
        engine: 'fake',
      }));
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
      return true;
    }
    const page = sitePages[request.url.pathname];
    if (!page) return false;
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(articlePage(page.title, page.paragraphs));
    return true;
  });
  return site;
}

/** The page paragraphs a report quotes (by their first 60 characters). */
export function quotedParagraphs(report: string): string[] {
  return Object.values(sitePages)
    .flatMap((page) => page.paragraphs)
    .filter((paragraph) => report.includes(paragraph.slice(0, 60)));
}
