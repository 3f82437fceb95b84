import { describe, expect, it } from 'vitest';
import { synonymsOf } from '../../shared/terms.ts';
import { profileQuestion } from '../relevance.ts';
import type { SourceText } from '../research-types.ts';
import { scorePassages } from './passage-ranking.ts';
import { blocksOf, passagesOf } from './passages.ts';

function page(text: string): SourceText {
  return { url: 'file:///docs/page.html', title: 'Page', text, offset: 0, query: '', provider: 'local', fetched: true };
}

/** Each passage's text and score on one page, for one question. */
function scored(question: string, text: string): Map<string, number> {
  const source = page(text);
  const blocks = blocksOf(source);
  const passages = passagesOf(source, blocks);
  const scores = scorePassages(profileQuestion(question), source, blocks, passages, 1);
  return new Map(passages.map((passage, index) => [passage.text.split('\n')[0]!, scores[index]!.score]));
}

describe('passage ranking with the manual’s words for the question’s (issue 42)', () => {
  it('groups plain equivalents by any inflection, and only them', () => {
    expect(synonymsOf('delete')).toEqual(['remove', 'erase']);
    expect(synonymsOf('Removing')).toEqual(['delete', 'erase']);
    expect(synonymsOf('folders')).toEqual(['directory']);
    expect(synonymsOf('modified')).toEqual(['change', 'alter']);
    // A topic word is no synonym: "revert" is a command of its own in Git, not an undo.
    expect(synonymsOf('undo')).toEqual([]);
    expect(synonymsOf('make')).toEqual([]);
  });

  it('counts a passage that says "remove … directory" as covering "delete … folder"', () => {
    const text = [
      '# Cleaning',
      'Remove untracked files from the working tree, one directory at a time.',
      'Untracked files are listed by the status command when asked.',
    ].join('\n\n');
    const scores = scored('How do I delete the untracked files in a folder?', text);
    expect(scores.get('Remove untracked files from the working tree, one directory at a time.')).toBeGreaterThan(
      scores.get('Untracked files are listed by the status command when asked.')! + 0.2,
    );
  });
});
