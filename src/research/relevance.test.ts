import { describe, expect, it } from 'vitest';
import { stems } from '../shared/terms.ts';
import { markCode, profileQuestion } from './relevance.ts';

describe('what a question asks about', () => {
  it('finds the subject of a definition question without its setting or verb', () => {
    expect(profileQuestion('What is a package in Python?').subjects).toEqual(['package']);
    expect(profileQuestion('What does the dataclass decorator generate?').subjects).toEqual(['dataclass decorator']);
    expect(profileQuestion('What does the yield keyword do in a function?').subjects).toEqual(['yield keyword']);
    expect(profileQuestion('What is the walrus operator (assignment expression)?').subjects).toEqual([
      'walrus operator',
      'assignment expression',
    ]);
  });

  it('keeps a stop word that names code ("the with statement"), never an article', () => {
    expect(markCode('What does the with statement do?')).toBe('What does the `with` statement do?');
    expect(markCode('What is an expression?')).toBe('What is an expression?');
    const profile = profileQuestion('What does the with statement do?');
    expect(profile.terms).toEqual(['with', 'statement']);
    expect(profile.subjects).toEqual(['`with` statement']);
    expect(profileQuestion('What is the difference between the is operator and ==?').subjects[0]).toBe('`is` operator');
  });

  it('counts words written as code even when they are stop words elsewhere', () => {
    // Within one text, a word written as code once counts wherever it stands.
    expect(stems('The `with` statement, with a block')).toEqual(['with', 'statement', 'with', 'block']);
    expect(stems('The with statement')).toEqual(['statement']);
  });
});
