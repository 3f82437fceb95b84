import { describe, expect, it } from 'vitest';
import { queryTerms, symbolTerms } from '../../shared/terms.ts';
import { parseResearchSettings } from '../research-settings.ts';
import { ExtractiveAnalyst } from './extractive-analyst.ts';
import { isNewQuery, planQueries } from './queries.ts';

describe('searching as users type (issue 42)', () => {
  it('searches symbols and addresses as terms', () => {
    const [make] = planQueries('What do $@ and $< mean in a make rule?', 3);
    expect(make).toContain('$@');
    expect(make).toContain('$<');
    const [address] = planQueries('How do I give eth0 the address 192.168.1.1?', 3);
    expect(address).toContain('192.168.1.1');
    const [option] = planQueries('What does awk -F do?', 3);
    expect(option).toContain('-F');
    // The search reads them as terms of their own, not as the letters and digits in them.
    expect(queryTerms('$@ 10.0.0.1 .PHONY')).toEqual(expect.arrayContaining(symbolTerms('$@ 10.0.0.1 .PHONY')));
    expect(symbolTerms('$@ 10.0.0.1 .PHONY -F')).toHaveLength(4);
    expect(symbolTerms('Use e.g. this, or the end.')).toEqual([]);
    // Quoted as code, or ending a sentence, a symbol is still itself; a symbol of one mark keeps it.
    expect(symbolTerms('It is just like `$*`, except `-n`. Or ‘--dry-run’; or $@.')).toEqual(
      symbolTerms('$* -n --dry-run $@'),
    );
    expect(symbolTerms('Then $? is set.')).toEqual(symbolTerms('$?'));
    // An option headed with its value or its negation is the option a user asks about.
    expect(symbolTerms('--format=<format>, --inspect[=[host:]port], --[no-]verify')).toEqual(
      symbolTerms('--format --inspect --verify --no-verify'),
    );
  });

  it('searches a long question with pasted code by its most distinctive terms, never not at all', () => {
    const code = Array.from({ length: 40 }, (_, index) => `    result_${index % 3} = frobnicate(value, ${index})`).join(
      '\n',
    );
    const question = `My script fails with KeyError: 'frobnicate_config' when I run it. Here is the code:\n${code}\nWhy?`;
    expect(question.length).toBeGreaterThan(1500);
    const queries = planQueries(question, 3);
    expect(queries.length).toBeGreaterThan(0);
    expect(queries[0]!.split(' ').length).toBeLessThanOrEqual(10);
    expect(queries[0]).toContain('frobnicate_config');
    // A question of common words only is still searched.
    expect(planQueries('How do I do it?', 3)).toHaveLength(1);
  });

  it('counts a word between spaces once, however many times its digits repeat', () => {
    expect(isNewQuery('assign 10.0.0.1 eth0', [], 2)).toBe(true);
    expect(isNewQuery('eth0 eth0', [], 2)).toBe(false);
    expect(isNewQuery('eth0 assign', ['assign eth0'], 2)).toBe(false);
  });
});

describe('the words a question asks with are not what it asks about (issue 42)', () => {
  const question = 'How do I make sure no two rows have the same pair of values in two columns?';

  it('never makes "make sure" a core term of the first searches', () => {
    const queries = planQueries(question, 3);
    // All the question's words are still searched together; the short search is of its topic.
    expect(queries[0]).toContain('make');
    expect(queries[1]).toBe('columns rows');
    expect(planQueries('How do I make a deep copy?', 3)).toEqual(['make deep copy', 'deep copy']);
    // A question of framing words only is still searched by them.
    expect(planQueries('How do I make it possible?', 3)).toEqual(['make']);
  });

  it('keeps them out of every feedback search', async () => {
    const settings = parseResearchSettings({});
    const text = (extra: string) =>
      `Use a unique constraint in the model Meta options to enforce uniqueness across fields ${extra}.`;
    const notes = ['together', 'declared', 'database'].map((extra, index) => ({
      id: `n${index}`,
      url: `file:///docs/${index}.html`,
      title: 'Model Meta options',
      text: text(extra),
      query: question,
      iteration: 1,
      score: 0.8,
    }));
    const analysis = await new ExtractiveAnalyst()
      .analyze({ question, notes, newNotes: notes, iteration: 1, asked: [], settings })
      .run(new AbortController().signal);
    expect(analysis.output.done).toBe(false);
    expect(analysis.output.nextQueries.length).toBeGreaterThan(0);
    for (const query of analysis.output.nextQueries) expect(query.startsWith('columns rows ')).toBe(true);
  });
});
