import { describe, expect, it } from 'vitest';
import type { SearchResult } from '../providers/search/search-provider.ts';
import { chooseSources } from './choose-sources.ts';
import { parseResearchSettings } from './research-settings.ts';

const settings = parseResearchSettings({ sourcesPerQuery: 3 });

function page(name: string, title: string): SearchResult {
  return { url: `file:///usr/share/doc/m4/${name}.html`, title, snippet: title, provider: 'local' };
}

describe('choosing the sources an iteration reads', () => {
  const results = [
    page('Diversions', 'Diversions (GNU M4 1.4.19 macro processor)'),
    page('GNU-Free-Documentation-License', 'GNU Free Documentation License (GNU M4 1.4.19 macro processor)'),
    page('Copying', 'Copying'),
    page('Copying-files', 'Copying files between folders'),
    page('Incr', 'Incr (GNU M4 1.4.19 macro processor)'),
  ];

  it('never reads a manual’s license or copying conditions for a question that is not about licensing', () => {
    const { chosen } = chooseSources([{ results }], ['How do I add two numbers together in m4?'], [], settings);
    expect(chosen.map((choice) => choice.result.url.split('/').pop())).toEqual([
      'Diversions.html',
      'Copying-files.html',
      'Incr.html',
    ]);
  });

  it('reads it when a query asks about licensing', () => {
    const { chosen } = chooseSources(
      [{ results }],
      ['May I redistribute a modified copy of the manual?'],
      [],
      settings,
    );
    expect(chosen.map((choice) => choice.result.url.split('/').pop())).toContain('GNU-Free-Documentation-License.html');
  });
});
