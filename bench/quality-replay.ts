/**
 * Replays the offline analyst over what `research-quality` sessions read, with this checkout's code:
 * each journaled page is taken notes of again, the notes are outlined again, and the report's
 * counts are compared with the journal's own. A screen for changes to passage choice and the
 * outline, in seconds where the benchmark takes minutes per half, not a measurement:
 *
 * - the research path is held fixed: what was searched and read is the journal's, though a change to
 *   notes would change the later searches (their words come from the best passages). Only the first
 *   iteration's reads are what the changed code would read too;
 * - counts are of the quoted passages' text (what the report body quotes) and of the first section's,
 *   matched as the benchmark matches them; "cited first" is the first section's page.
 *
 * With the code unchanged the replay reproduces the journal (the "same notes" column says for how many
 * sessions every note is identical; anything else means the code differs from the run's). A change
 * found here is measured with `npm run bench -- quality` before it is kept, on both halves.
 *
 * Usage: `QUALITY_KEEP=<folder> npm run bench -- quality` first (it keeps each set's home), then
 * `node --import tsx bench/quality-replay.ts <folder> [dev|test]`. Replaying the test half is
 * measuring it: tune on the dev half only. Opening a kept store with this checkout migrates it, as
 * the benchmark's own reading of its journals does.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExtractiveAnalyst } from '../src/research/extractive/extractive-analyst.ts';
import { parseResearchSettings } from '../src/research/research-settings.ts';
import type { Note, Outline, SourceText } from '../src/research/research-types.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Session } from '../src/store/store-entities.ts';
import { type Half, halfOf, pageOf, type QuestionSet, readable } from './research-quality.ts';

interface Counts {
  questions: number;
  phrase: number;
  phraseFirst: number;
  citedFirst: number;
  sameNotes: number;
}

/** Iteration and index of a step key such as `iteration-2/read-5`, for the order research took them in. */
function placeOfStep(key: string): [number, number] {
  const match = /iteration-(\d+)\/(?:read|notes)-(\d+)$/.exec(key);
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
}

function byPlace(a: { key: string }, b: { key: string }): number {
  const [ai, aj] = placeOfStep(a.key);
  const [bi, bj] = placeOfStep(b.key);
  return ai - bi || aj - bj;
}

/** The text an outline's sections quote, all of them and the first. */
function quotedText(outline: Outline, notes: readonly Note[]): { body: string; first: string; firstUrl?: string } {
  const byId = new Map(notes.map((note) => [note.id, note]));
  const text = (ids: readonly string[]) =>
    ids
      .map((id) => byId.get(id))
      .map((note) => (note?.follows ? `${note.text}\n\n${note.follows}` : (note?.text ?? '')))
      .join('\n\n');
  const [first] = outline.sections;
  return {
    body: text(outline.sections.flatMap((section) => section.noteIds)),
    first: first ? text(first.noteIds) : '',
    firstUrl: first ? byId.get(first.noteIds.at(-1) ?? '')?.url : undefined,
  };
}

async function replaySet(home: string, set: QuestionSet, half: Half): Promise<{ journal: Counts; replay: Counts }> {
  const analyst = new ExtractiveAnalyst();
  const store = await openStore({ db: join(home, 'quarry.db') });
  const empty = (): Counts => ({ questions: 0, phrase: 0, phraseFirst: 0, citedFirst: 0, sameNotes: 0 });
  const journal = empty();
  const replay = empty();
  try {
    const sessions: Session[] = [];
    for (let cursor: string | null | undefined; cursor !== null; ) {
      const page = await store.listSessions({ limit: 500, ...(cursor ? { cursor } : {}) });
      sessions.push(...page.sessions);
      cursor = page.nextCursor;
    }
    const signal = new AbortController().signal;
    for (const [index, labeled] of set.questions.entries()) {
      if (halfOf(set, index) !== half) continue;
      const session = sessions.find((each) => each.question === labeled.question);
      if (!session) continue;
      const holds = (text: string) => labeled.phrases.some((phrase) => readable(text).includes(readable(phrase)));
      const answers = (url?: string) =>
        url !== undefined && labeled.pages.includes(pageOf(set, decodeURIComponent(url.replace(/^file:\/\//, ''))));
      const settings = parseResearchSettings(session.settings);
      const steps = await store.listSteps(session.id);
      const journaledNotes = steps
        .filter((step) => /\/notes-\d+$/.test(step.key))
        .sort(byPlace)
        .flatMap((step) => (step.output as { value?: Note[] } | undefined)?.value ?? []);
      const notes: Note[] = [];
      for (const step of steps.filter((each) => /\/read-\d+$/.test(each.key)).sort(byPlace)) {
        const [iteration, at] = placeOfStep(step.key);
        const taken = await analyst
          .takeNotes({
            question: labeled.question,
            source: step.output as SourceText,
            iteration,
            idPrefix: `r1/iteration-${iteration}-${at}`,
            settings,
          })
          .run(signal);
        notes.push(...taken.output);
      }
      const outlined = await analyst.outline({ question: labeled.question, notes, settings }).run(signal);
      const journaledOutline = (steps.find((step) => step.key === 'outline')?.output as { value?: Outline } | undefined)
        ?.value;
      const count = (counts: Counts, outline: Outline | undefined, from: readonly Note[]) => {
        counts.questions += 1;
        if (!outline) return;
        const { body, first, firstUrl } = quotedText(outline, from);
        if (holds(body)) counts.phrase += 1;
        if (holds(first)) counts.phraseFirst += 1;
        if (answers(firstUrl)) counts.citedFirst += 1;
      };
      count(journal, journaledOutline, journaledNotes);
      count(replay, outlined.output, notes);
      const fingerprint = (each: readonly Note[]) =>
        JSON.stringify(each.map((note) => [note.id, note.score, note.text]));
      if (fingerprint(notes) === fingerprint(journaledNotes)) replay.sameNotes += 1;
    }
  } finally {
    await store.close();
  }
  return { journal, replay };
}

export async function replay(folder: string, half: Half): Promise<void> {
  const sets = join(fileURLToPath(new URL('.', import.meta.url)), 'quality');
  console.log(`Replay of ${folder} (${half} half) with this checkout's analyst; research paths as journaled.\n`);
  console.log(
    '| set | questions | same notes | answer phrase: journal → replay | in first section | cited first (first section) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const name of readdirSync(folder).sort()) {
    const file = join(sets, `${name}.json`);
    if (!existsSync(file) || !existsSync(join(folder, name, 'quarry.db'))) continue;
    const set = JSON.parse(readFileSync(file, 'utf8')) as QuestionSet;
    const { journal, replay: replayed } = await replaySet(join(folder, name), set, half);
    if (journal.questions === 0) continue;
    const pair = (key: keyof Counts) => `${journal[key]} → ${replayed[key]}`;
    console.log(
      `| ${name} | ${journal.questions} | ${replayed.sameNotes} | ${pair('phrase')} | ${pair('phraseFirst')} | ${pair('citedFirst')} |`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [folder, half = 'dev'] = process.argv.slice(2);
  if (!folder || !existsSync(folder) || (half !== 'dev' && half !== 'test')) {
    console.error('usage: node --import tsx bench/quality-replay.ts <QUALITY_KEEP folder> [dev|test]');
    process.exit(2);
  }
  await replay(folder, half);
}
