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

  it('keeps a follow-up on the page its conversation read: the page keeps its place in the first search (issue 42)', () => {
    const passage = (name: string, id: number): SearchResult => ({
      ...page(name, name),
      url: `file:///usr/share/doc/git/${name}.html`,
      metadata: { passageId: id },
    });
    // "What does -i do?" after "What does git clean -n do?": the first search's best result is
    // git-clean's synopsis, which the first run read; git-clean's -i entry comes from the second search.
    const searches = [
      { results: [passage('git-clean', 1), passage('git-config', 2), passage('git-add', 3)] },
      { results: [passage('git-clean', 4), passage('git-rebase', 5)] },
    ];
    const read = [
      'file:///usr/share/doc/git/git-clean.html#passage-1',
      'file:///usr/share/doc/git/git-config.html#passage-2',
    ];
    const first = { first: true };
    const { chosen } = chooseSources(searches, ['-i git clean', '-i'], read, settings, first);
    const leads = Object.fromEntries(chosen.map((choice) => [choice.result.url.split('/').pop(), choice.lead]));
    expect(leads).toEqual({ 'git-add.html': 2, 'git-clean.html': 0, 'git-rebase.html': undefined });
    // A first run has read nothing: a page first met by a later search has no place in the first one.
    const fresh = chooseSources(
      [{ results: [passage('git-add', 3)] }, searches[1]!],
      ['-i git clean', '-i'],
      [],
      settings,
      first,
    );
    expect(fresh.chosen.find((choice) => choice.result.url.includes('git-clean'))?.lead).toBeUndefined();
  });
});
