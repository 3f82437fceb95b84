import { describe, expect, it } from 'vitest';
import { dateGroup, groupByDate } from './group-by-date.ts';
import { renderReport } from './render-report.ts';

describe('renderReport', () => {
  const sources = [{ citation: 1, title: 'Tides "and" <waves>', url: 'https://example.org/tides' }];

  it('links [n] citations to the sources list with the title as a preview', () => {
    const html = renderReport('Tides rise twice a day [1]. Unknown [7].', sources);
    expect(html).toContain(
      '<a class="citation" href="#source-1" title="Tides &quot;and&quot; &lt;waves&gt; — https://example.org/tides">[1]</a>',
    );
    expect(html).toContain('Unknown [7].');
  });

  it('shows HTML from sources as text, never as markup', () => {
    const html = renderReport('<script>alert(1)</script> <img src=x onerror="alert(2)"> [x](javascript:alert(3))', []);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('&lt;script&gt;');
  });

  it('marks flagged claims', () => {
    expect(renderReport('A claim [1]. **[unverified]**', sources)).toContain('<mark class="unverified"');
    expect(renderReport('A claim. **[uncited]**', sources)).toContain('<mark class="unverified uncited"');
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
