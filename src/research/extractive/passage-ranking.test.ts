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
    // "substitution" and "substitutes" too: m4's `patsubst` does "Global substitution in a string".
    expect(synonymsOf('replace')).toEqual(['substitute']);
    expect(synonymsOf('substitution')).toEqual(['replace']);
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

  it('counts "global substitution" as replacing, so patsubst answers "replace every match"', () => {
    // m4's manual: `regexp` searches, `patsubst` replaces; both entries speak of regular expressions.
    const text = [
      '# Regular expressions',
      '## regexp',
      'Searching for regular expressions is done with the builtin regexp, which finds every match of a regular expression in a string.',
      '## patsubst',
      'Global substitution in a string is done by patsubst, for every match of a regular expression.',
    ].join('\n\n');
    const scores = scored('How do I replace every match of a regular expression in a string?', text);
    expect(
      scores.get('Global substitution in a string is done by patsubst, for every match of a regular expression.'),
    ).toBeGreaterThan(
      scores.get(
        'Searching for regular expressions is done with the builtin regexp, which finds every match of a regular expression in a string.',
      )! + 0.2,
    );
  });

  it('ranks the passage that sets two symbols side by side above an example that only shows both in code', () => {
    // m4's "Special arguments to macros": the answer names $* in its prose, the example only in code.
    const text = [
      '# Special arguments',
      'Often each argument should be quoted, and the notation `$@` handles that. It is just like `$*`, except that it quotes each argument.',
      "Where did the quotes go? They were eaten. To show the difference in a macro body, try\n\n```\ndefine(`echo1', `$*')\ndefine(`echo2', `$@')\n```",
    ].join('\n\n');
    const scores = scored('What is the difference between $* and $@ in a macro body?', text);
    expect(
      scores.get(
        'Often each argument should be quoted, and the notation `$@` handles that. It is just like `$*`, except that it quotes each argument.',
      ),
    ).toBeGreaterThan(
      scores.get('Where did the quotes go? They were eaten. To show the difference in a macro body, try')!,
    );
  });

  it('answers "what does -n do?" with the entry headed by -n, not the synopsis that lists it', () => {
    const source: SourceText = {
      ...page(
        [
          '# git-clean(1) Manual Page',
          '## NAME',
          'git-clean - Remove untracked files from the working tree',
          '## SYNOPSIS',
          '```\ngit clean [-d] [-f] [-i] [-n] [-q] [-e <pattern>]\n```',
          '## OPTIONS',
          '##### -n, --dry-run',
          'Don’t actually remove anything, just show what would be done.',
          '## CONFIGURATION',
          '##### clean.requireForce',
          'A boolean to make git-clean do nothing unless given -f, -i or -n. Defaults to true.',
        ].join('\n\n'),
      ),
      title: 'git-clean(1)',
    };
    const blocks = blocksOf(source);
    const passages = passagesOf(source, blocks);
    const scores = scorePassages(profileQuestion('What does git clean -n do?'), source, blocks, passages, 1);
    const best = passages[scores.indexOf(scores.reduce((a, b) => (b.score > a.score ? b : a)))]!;
    expect(best.text).toBe('Don’t actually remove anything, just show what would be done.');
  });

  it('reads the entry headed by an identifier the question names as its definition (SECURE_SSL_REDIRECT)', () => {
    // Django's settings, as the index reads them: an identifier is named as the manual heads its entry.
    const source: SourceText = {
      ...page(
        [
          '# Settings',
          '## Core Settings',
          '### `SECURE_REDIRECT_EXEMPT`',
          'Default: `[]` (Empty list)',
          "If a URL path matches a regular expression in this list, the request will not be redirected to HTTPS. The `SecurityMiddleware` strips leading slashes from URL paths, so patterns shouldn’t include them, e.g. `SECURE_REDIRECT_EXEMPT = [r'^no-ssl/$', …]`. If `SECURE_SSL_REDIRECT` is `False`, this setting has no effect.",
          '### `SECURE_SSL_REDIRECT`',
          'Default: `False`',
          'If `True`, the `SecurityMiddleware` redirects all non-HTTPS requests to HTTPS (except for those URLs matching a regular expression listed in `SECURE_REDIRECT_EXEMPT`).',
        ].join('\n\n'),
      ),
      title: 'Settings',
    };
    const blocks = blocksOf(source);
    const passages = passagesOf(source, blocks);
    const question = profileQuestion('What does the SECURE_SSL_REDIRECT setting do?');
    const scores = scorePassages(question, source, blocks, passages, 1);
    // The entry is the definition of what the question names, which an answer opens with; the
    // setting that names it in passing is not.
    const definitions = passages.filter((_, index) => scores[index]!.definition).map((passage) => passage.headings);
    expect(new Set(definitions)).toEqual(new Set(['Settings › Core Settings › SECURE_SSL_REDIRECT']));
  });

  it('never quotes the version stamp that heads an API entry on its own', () => {
    const text = [
      '#### `--inspect[=[host:]port]`',
      'Added in: v6.3.0',
      'Activate inspector on `host:port`. Default is `127.0.0.1:9229`.',
      'New in version 3.2 of the inspector protocol, the port may be 0.',
    ].join('\n\n');
    const scores = scored('What does node --inspect do?', text);
    const source = page(text);
    const blocks = blocksOf(source);
    const passages = passagesOf(source, blocks);
    const each = scorePassages(profileQuestion('What does node --inspect do?'), source, blocks, passages, 1);
    expect(each[passages.findIndex((passage) => passage.text === 'Added in: v6.3.0')]?.score).toBe(0);
    expect(scores.get('Activate inspector on `host:port`. Default is `127.0.0.1:9229`.')).toBeGreaterThan(0);
    // A stamp in a sentence is a sentence.
    expect(scores.get('New in version 3.2 of the inspector protocol, the port may be 0.')).toBeGreaterThan(0);
  });
});
