import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../test/support/test-config.ts';
import type { TestDatabase } from '../store/conformance/harness.ts';
import { sqliteHarness } from '../store/sqlite/sqlite-harness.ts';
import { answerChore, recognizeChore } from './housekeeping.ts';
import { localServiceContext } from './local-context.ts';

const user = (text: string) => [{ role: 'user' as const, text }];

describe('front-end housekeeping requests', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await sqliteHarness.create();
  });
  afterEach(async () => {
    await database.destroy();
  });

  it('tells a client’s own tasks from questions', () => {
    const history = '<chat_history>\nUSER: How do tidal barrages work?\nASSISTANT: They hold water…\n</chat_history>';
    expect(
      recognizeChore(user(`### Task:\nGenerate a concise, 3-5 word title.\n### Chat History:\n${history}`)),
    ).toMatchObject({ kind: 'title', question: 'How do tidal barrages work?' });
    expect(
      recognizeChore(user(`### Task:\nGenerate 1-3 broad tags.\nJSON format: { "tags": [] }\n${history}`)),
    ).toMatchObject({
      kind: 'tags',
      json: true,
    });
    expect(recognizeChore(user(`### Task:\nSuggest 3-5 relevant follow-up questions.\n${history}`))?.kind).toBe(
      'follow-ups',
    );
    expect(
      recognizeChore(user('Please generate a concise, 5-word-or-less title for the conversation, with no punctuation.'))
        ?.kind,
    ).toBe('title');
    // Questions that mention titles or chats are questions.
    for (const question of [
      'How do tidal barrages work?',
      'Write a title for my blog post about chat apps',
      'What makes a good title for a research paper?',
    ])
      expect(recognizeChore(user(question)), question).toBeNull();
  });

  it('answers without a model: the session’s title, the question’s main words, no suggestions', async () => {
    const context = localServiceContext(database.store, testConfig());
    const question = 'How do tidal barrages generate electricity?';
    const session = await database.store.createSession({
      ownerId: 'local',
      title: 'Tidal barrages',
      question,
      workflow: { name: 'research', version: 4 },
      run: { kind: 'initial', input: { question } },
    });
    const history = `<chat_history>\nUSER: ${question}\nASSISTANT: …\n</chat_history>`;
    const title = await answerChore(
      context,
      recognizeChore(user(`### Task:\nGenerate a title. JSON format: { "title": "" }\n${history}`))!,
    );
    expect(JSON.parse(title.text)).toEqual({ title: session.title });
    const tags = await answerChore(
      context,
      recognizeChore(user(`### Task:\nGenerate 1-3 broad tags. JSON\n${history}`))!,
    );
    expect(JSON.parse(tags.text).tags).toEqual(expect.arrayContaining(['tidal']));
    const follow = await answerChore(
      context,
      recognizeChore(user(`### Task:\nSuggest follow-up questions. JSON\n${history}`))!,
    );
    expect(JSON.parse(follow.text)).toEqual({ follow_ups: [] });
    expect(title.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect((await database.store.listSessions()).sessions).toHaveLength(1);
  });
});
