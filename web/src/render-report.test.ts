import { describe, expect, it } from 'vitest';
import { dateGroup, groupByDate } from './group-by-date.ts';
import { renderPassage, renderReport, reportSections } from './render-report.ts';

describe('renderReport', () => {
  const citations = new Set([1, 2]);

  it('turns [n] of a known source into a button that opens its passage, and leaves others as text', () => {
    const html = renderReport('Tides rise twice a day [1, 2]. Unknown [7].', { citations });
    expect(html).toContain(
      '<button type="button" class="citation" data-citation="1" aria-label="Source 1">[1]</button>',
    );
    expect(html).toContain('data-citation="2"');
    expect(html).toContain('Unknown [7].');
  });

  it('never makes a citation inside code', () => {
    const html = renderReport('Use `items[1]` here [1].\n\n```\nvalues[2] = 3\n```\n', { citations });
    expect(html).toContain('<code>items[1]</code>');
    expect(html).toContain('values[2] = 3');
    expect(html.match(/class="citation"/g)).toHaveLength(1);
  });

  it('shows HTML from sources as text, never as markup, and loads no image', () => {
    const html = renderReport(
      '<script>alert(1)</script> <img src=x onerror="alert(2)"> [x](javascript:alert(3)) ![tracker](http://127.0.0.1:9/pixel.png)',
      { citations },
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('&lt;script&gt;');
  });

  it('marks flagged claims in place with the reason', () => {
    const flagged = [
      { verdict: 'unsupported', reason: '20% of its content words appear in the cited sources’ passages' },
      { verdict: 'uncited', reason: 'no source is cited for it' },
    ];
    const html = renderReport('A claim [1]. **[unverified]** Another claim. **[uncited]**', { citations, flagged });
    expect(html).toContain('class="flag unverified" data-reason="20% of its content words');
    expect(html).toContain('class="flag uncited" data-reason="no source is cited for it"');
  });
  it('leaves a quoted passage as its source wrote it: its [n] is the source’s own, and bold text stays bold', () => {
    const html = renderReport('> The manual says [2] and **[uncited]** here.\n\nOurs [2]. **Bold [2]**', { citations });
    expect(html).toContain('<blockquote>\n<p>The manual says [2] and');
    expect(html.match(/class="citation"/g)).toHaveLength(2);
    expect(html).toContain('<strong>Bold <button type="button" class="citation" data-citation="2"');
    expect(html).toContain('class="flag uncited"');
    expect(html).not.toContain('<strong></strong>');
  });
});

describe('groupByDate', () => {
  it('groups sessions into Today, Yesterday, Previous 7 days and Older', () => {
    const now = new Date(2026, 10, 22, 15, 0);
    const at = (days: number) => new Date(2026, 10, 22 - days, 9, 0).toISOString();
    expect(dateGroup(at(0), now)).toBe('Today');
    expect(dateGroup(at(1), now)).toBe('Yesterday');
    expect(dateGroup(at(5), now)).toBe('Previous 7 days');
    expect(dateGroup(at(30), now)).toBe('Older');
    const groups = groupByDate([{ updatedAt: at(30) }, { updatedAt: at(0) }, { updatedAt: at(1) }], now);
    expect(groups.map(([name, items]) => [name, items.length])).toEqual([
      ['Today', 1],
      ['Yesterday', 1],
      ['Older', 1],
    ]);
  });
});

describe('report sections and copying', () => {
  const citations = new Set([1, 2]);
  const report = [
    '# Tidal power',
    '',
    'Intro [1].',
    '',
    '## How it works',
    '',
    'Turbines turn [1].',
    '',
    '### Barrages',
    '',
    'A dam [2].',
    '',
    '```',
    'flow[1] = 3',
    '```',
    '',
    '## Sources',
    '',
    '1. Tides',
  ].join('\n');

  it('lists level-2 and level-3 sections, each with its own Markdown, and gives their headings those ids', () => {
    const sections = reportSections(report);
    expect(sections.map(({ level, title, id }) => [level, title, id])).toEqual([
      [2, 'How it works', 'section-1'],
      [3, 'Barrages', 'section-2'],
      [2, 'Sources', 'section-3'],
    ]);
    expect(sections[0]!.markdown).toBe(
      '## How it works\n\nTurbines turn [1].\n\n### Barrages\n\nA dam [2].\n\n```\nflow[1] = 3\n```',
    );
    expect(sections[1]!.markdown).toBe('### Barrages\n\nA dam [2].\n\n```\nflow[1] = 3\n```');
    const html = renderReport(report, { citations });
    expect(html).toContain('<h2 id="section-1">How it works <button type="button" class="copy" data-copy-section="1"');
    expect(html).toContain('<h3 id="section-2">Barrages');
    expect(html).toContain(
      '<button type="button" class="copy" data-copy-code aria-label="Copy this code">Copy</button><pre tabindex="0">',
    );
    expect(html).toContain('flow[1] = 3');
  });

  it('never rewrites [n] inside an attribute (a link title keeps its text)', () => {
    const html = renderReport('See [the page](https://example.org/a "from [1] here") [1].', { citations });
    expect(html).toContain('title="from [1] here"');
    expect(html.match(/class="citation"/g)).toHaveLength(1);
  });
});

describe('renderPassage', () => {
  it('renders the source’s Markdown and marks the quoted words, across blocks without broken nesting', () => {
    const html = renderPassage({
      before: '## Tidal barrages\n\nA **barrage** holds water ',
      quote: 'behind a dam.\n\n- Turbines turn',
      after: ' as it falls.\n\nSee `turbine[1]`.',
    });
    expect(html).toContain('<h2>Tidal barrages</h2>');
    expect(html).toContain('<strong>barrage</strong>');
    expect(html).toContain('<mark>behind a dam.</mark></p>');
    expect(html).toContain('<li><mark>Turbines turn</mark> as it falls.</li>');
    expect(html).toContain('<code>turbine[1]</code>');
    expect(html).not.toMatch(/[\uE000\uE001]/);
  });

  it('shows HTML and images from a source as text or nothing, never as markup', () => {
    const html = renderPassage({
      before: '<script>x()</script> ',
      quote: '![pixel](http://127.0.0.1:9/p.png)',
      after: '',
    });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
  });
});

describe('source lists', () => {
  it('opens a local document of a source list beside the report; web addresses stay links, code is left alone', () => {
    const text = [
      '## Sources',
      '',
      '1. Tidal energy — </srv/docs/energy/tidal.md>',
      '2. Barrages — <https://example.org/barrages>',
      '3. Uncited — </srv/docs/other.md>',
      '',
      '- [4] Tides — <file:///srv/docs/tides.txt>',
      '',
      '```',
      '1. Not a list — </etc/passwd>',
      '```',
    ].join('\n');
    const html = renderReport(text, { citations: new Set([1, 2, 4]) });
    expect(html).toContain(
      'Tidal energy — <button type="button" class="source-link" data-citation="1" aria-label="Open source 1: /srv/docs/energy/tidal.md">/srv/docs/energy/tidal.md</button>',
    );
    expect(html).toContain('<a href="https://example.org/barrages">');
    expect(html).toContain('Uncited — &lt;/srv/docs/other.md&gt;');
    expect(html).toContain('data-citation="4" aria-label="Open source 4: file:///srv/docs/tides.txt"');
    expect(html).toContain('1. Not a list — &lt;/etc/passwd&gt;');
    expect(html.match(/class="source-link"/g)).toHaveLength(2);
  });
});
