import { describe, expect, it } from 'vitest';
import { extractHtml } from './extract-html.ts';

const page = (head: string, body: string) => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

describe('extracting local documentation pages', () => {
  it('titles a page by its <title>, not by a numbered first heading (issue 31)', async () => {
    const sqliteLike = page(
      '<title>SQLite Query Language: CREATE INDEX</title>',
      '<main><h1>1. Overview</h1><p>The CREATE INDEX command consists of the keywords "CREATE INDEX" followed by the name of the new index, the keyword "ON", the name of a previously created table that is to be indexed, and a parenthesized list of table column names.</p></main>',
    );
    expect((await extractHtml(sqliteLike, { mode: 'document' })).title).toBe('SQLite Query Language: CREATE INDEX');
  });

  it('keeps the heading a <title> holds with the site’s name around it', async () => {
    const sphinxLike = page(
      '<title>json — JSON encoder and decoder — Python 3.11.2 documentation</title>',
      '<div role="main"><h1>json — JSON encoder and decoder<a class="headerlink">¶</a></h1><p>JSON (JavaScript Object Notation) is a lightweight data interchange format inspired by JavaScript object literal syntax, and this module exposes an API familiar to users of the standard library marshal and pickle modules.</p></div>',
    );
    expect((await extractHtml(sphinxLike, { mode: 'document' })).title).toBe('json — JSON encoder and decoder');
  });

  it('bounds a heading closed by the wrong tag, keeping the page’s text as text (issue 31)', async () => {
    const paragraphs = Array.from(
      { length: 400 },
      (_, index) => `<p>Paragraph ${index} explains how the checkpoint works and why it is run.</p>`,
    ).join('');
    const broken = page(
      '<title>WAL mode</title>',
      `<main><h4>Checkpointing</h3>${paragraphs}<h2>Next</h2><p>The end of the page says goodbye to the reader.</p></main>`,
    );
    const extracted = await extractHtml(broken, { mode: 'document' });
    const headings = extracted.text.split('\n').filter((line) => line.startsWith('#'));
    expect(headings).toContain('#### Checkpointing');
    for (const heading of headings) expect(heading.length).toBeLessThanOrEqual(210);
    expect(extracted.text).toContain('Paragraph 399 explains how the checkpoint works');
  });

  it('cuts a heading that is a page long at a word', async () => {
    const long = page(
      '<title>Long</title>',
      `<main><h2>${'word '.repeat(200)}</h2><p>${'Text. '.repeat(50)}</p></main>`,
    );
    const heading = (await extractHtml(long, { mode: 'document' })).text.split('\n')[0]!;
    expect(heading.length).toBeLessThanOrEqual(210);
    expect(heading.endsWith('…')).toBe(true);
  });

  it('leaves out a site menu that no class names, and a heading’s own # mark (Node.js API pages)', async () => {
    const modules = [
      'Assertion testing',
      'Buffer',
      'Child processes',
      'Cluster',
      'Crypto',
      'DNS',
      'Events',
      'File system',
    ];
    const menu = `<ul>${modules.map((name) => `<li><a href="${name}.html">${name}</a></li>`).join('')}</ul>`;
    const nodeLike = page(
      '<title>Test runner | Node.js Documentation</title>',
      `<div id="column2">${menu}</div><div id="column1"><details id="toc"><summary>Table of contents</summary>` +
        '<ul><li><a href="#subtests">Subtests</a></li></ul></details>' +
        '<h2>Test runner<span><a class="mark" href="#test-runner">#</a></span></h2>' +
        '<p>The <code>node:test</code> module facilitates the creation of JavaScript tests.</p>' +
        '<p>See <a href="a.html">assert</a>, <a href="b.html">buffer</a> and <a href="c.html">events</a>.</p>' +
        '<ol><li>Write a test.</li><li>Run it.</li></ol></div>',
    );
    const { text } = await extractHtml(nodeLike, { mode: 'document' });
    expect(text.startsWith('## Test runner\n\nThe `node:test` module facilitates')).toBe(true);
    for (const name of modules) expect(text).not.toContain(name);
    expect(text).not.toContain('Table of contents');
    // Links in the page's own prose, and its short lists, stay.
    expect(text).toContain('See assert, buffer and events.');
    expect(text).toContain('1. Write a test.');
    // A list of eight links that are only part of each item's words is content: a definition of each.
    const described = `<ul>${modules.map((name) => `<li><a href="${name}.html">${name}</a>: what the ${name} module is for, in a sentence of its own.</li>`).join('')}</ul>`;
    expect((await extractHtml(page('<title>Modules</title>', described), { mode: 'document' })).text).toContain(
      '- Buffer: what the Buffer module is for',
    );
  });
});
