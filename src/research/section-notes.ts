import { coverage, profileQuestion, selectDiverse, stems } from './relevance.ts';
import type { Note, Outline } from './research-types.ts';

/** Notes a section gets when its outline named none. */
const NOTES_PER_FILLED_SECTION = 4;
/** Least share of a section's title-and-focus terms a note must cover to be given to it. */
const FILL_FLOOR = 0.25;
/**
 * Least share of the question's terms a note must cover to answer it in the fallback section (the
 * question is longer than a title, so a note that answers part of it covers less of it).
 */
const ANSWER_FLOOR = 0.1;

/** The notes that best match `about` (title and focus, or the question), diverse, best first. */
function notesAbout(about: string, notes: readonly Note[], floor: number): string[] {
  const profile = profileQuestion(about);
  const ranked = notes
    .map((note) => ({
      note,
      score: coverage(profile, new Set(stems(`${note.heading ?? ''} ${note.text} ${note.quote ?? ''}`))),
    }))
    .filter((entry) => entry.score >= floor);
  return selectDiverse(
    ranked.sort((a, b) => b.score - a.score),
    NOTES_PER_FILLED_SECTION,
    (entry) => entry.score,
    (entry) => new Set(stems(entry.note.text)),
  ).map((entry) => entry.note.id);
}

/**
 * An outline every section of which is written from notes: ids that name no citable note are
 * dropped; a section left without notes gets the citable notes that best match its title and focus
 * (ranked as the extractive analyst ranks sentences), or is dropped when none match. When that
 * leaves no section at all although notes match the question, one section answers the question from
 * them. A report is only ever written from notes, so every sentence of it can cite.
 */
export function groundOutline(
  outline: Outline,
  notes: readonly Note[],
  question: string,
): { outline: Outline; filled: string[]; dropped: string[] } {
  const byId = new Map(notes.map((note) => [note.id, note]));
  const filled: string[] = [];
  const dropped: string[] = [];
  const sections = outline.sections.flatMap((section) => {
    const noteIds = [...new Set(section.noteIds)].filter((id) => byId.has(id));
    if (noteIds.length > 0) return [{ ...section, noteIds }];
    const chosen = notesAbout(`${section.title} ${section.focus}`, notes, FILL_FLOOR);
    if (chosen.length === 0) {
      dropped.push(section.title);
      return [];
    }
    filled.push(section.title);
    return [{ ...section, noteIds: chosen }];
  });
  if (sections.length === 0) {
    const answering = notesAbout(question, notes, ANSWER_FLOOR);
    if (answering.length > 0) {
      filled.push(FALLBACK_SECTION);
      sections.push({ title: FALLBACK_SECTION, focus: question, noteIds: answering });
    }
  }
  return { outline: { ...outline, sections }, filled, dropped };
}

/** The one section a report gets when no section of its outline matched any note. */
export const FALLBACK_SECTION = 'What the sources say';
