import { describe, expect, it } from 'vitest';
import type { SearchResult } from '../../providers/search/search-provider.ts';
import { profileQuestion } from '../relevance.ts';
import { isCodeHeading } from './headings.ts';
import { rankResults } from './rank-results.ts';

const result = (title: string, headings: string, score: number): SearchResult => ({
  url: `file:///docs/${title.replace(/\W+/g, '-')}.html`,
  title,
  snippet: '',
  provider: 'local',
  metadata: { headings, score },
});

describe('choosing which results to read', () => {
  it('moves a section named for the subject of a "what is" question above pages that only use it', () => {
    const results = [
      result('What’s New in Python 2.4', 'PEP 318: Decorators for Functions and Methods', 14.3),
      result('unittest.mock — getting started', 'Patch Decorators', 13.9),
      result('Glossary', 'Glossary › decorator', 11.9),
    ];
    const ranked = rankResults(profileQuestion('What is a decorator?'), results);
    expect(ranked[0]!.title).toBe('Glossary');
  });

  it('keeps the search order when nothing is named for the question', () => {
    const results = [result('A', 'One', 3), result('B', 'Two', 2), result('C', 'Three', 1)];
    expect(rankResults(profileQuestion('How do I sort a list?'), results)).toEqual(results);
  });

  it('tells API entries from topics', () => {
    expect(isCodeHeading('exception copy.Error')).toBe(true);
    expect(isCodeHeading('class json.JSONEncoder(*, skipkeys=False)')).toBe(true);
    expect(isCodeHeading('os.environ')).toBe(true);
    expect(isCodeHeading('Directory and files operations')).toBe(false);
  });
});
