import { splitSentences } from '../../shared/sentences.ts';
import { similarity, stems } from '../relevance.ts';
import type { ResearchSettings } from '../research-settings.ts';
import type { Note, Outline, OutlineSection } from '../research-types.ts';
import { isCodeHeading } from './headings.ts';

/**
 * The outline of a report made of quoted passages: the answer first — the best passage of the page
 * the research trusts most, after the page's one-line summary of itself when it has one, with the
 * passages of that page that belong with it — under a heading
 * that is the page's and the section's own; then, under "Also in these documents", the best passage
 * of each of a few other pages. A passage below the floor is never written: short reports that
 * answer beat long ones that do not.
 */

/** The heading of the passages after the answer. */
export const ALSO_GROUP = 'Also in these documents';

/** Passages in the answer, and other pages quoted after it, by report length. */
const sizes = {
  short: { answer: 2, also: 2 },
  medium: { answer: 3, also: 3 },
  long: { answer: 3, also: 5 },
} as const;

/**
 * How much a page's place in the run's first search counts: the search's order is the prior, so a
 * page it ranked lower must quote a clearly better passage to answer instead of its first page.
 */
export const LEAD_PRIOR = [1, 0.75, 0.65, 0.6] as const;
const UNSEARCHED_PRIOR = 0.55;
/** A passage joins the answer when it reaches this share of the answer's best passage's score. */
const ANSWER_FLOOR = 0.75;
/** Passages whose words overlap this much (Jaccard) are the same passage twice. */
const NEAR_COPY = 0.8;
/** Another page is quoted when its best passage reaches this share of the answer's. */
const ALSO_FLOOR = 0.55;

/**
 * The prior of each page: of its place in the run's first search, which any of its notes may carry
 * (a passage of the page that a later search found, or one that covers a passage read there, is
 * still of the page the first search ranked).
 */
function priors(notes: readonly Note[]): Map<string, number> {
  const places = new Map<string, number>();
  for (const note of notes)
    if (note.lead !== undefined) places.set(note.url, Math.min(note.lead, places.get(note.url) ?? note.lead));
  return new Map([...places].map(([url, lead]) => [url, LEAD_PRIOR[Math.min(lead, LEAD_PRIOR.length - 1)]!]));
}

/**
 * A heading that is code rather than a topic: a signature, an option (with words after it or not), a
 * dotted name, a command line a definition list uses as its term ("git archive -o latest.tar HEAD"),
 * a prompt, a statement (a plain word, as a glossary entry's "estuary", is a topic).
 */
function isCodeTitle(heading: string): boolean {
  if (/^[\p{L}][\p{L}'’-]*$/u.test(heading)) return false;
  // An option ("--full-history with parent rewriting"), a lowercase command with an option after
  // it, a shell or REPL prompt, code punctuation.
  if (/^--?[a-zA-Z]|^[a-z][\w.+-]*(?:\s+\S+)*?\s+--?[a-zA-Z]/.test(heading)) return true;
  if (/^(?:\$|%|#|>>>)\s|[{};=`]/.test(heading)) return true;
  return isCodeHeading(heading);
}

/** The headings of a note's path below the page's own (which says nothing more), outermost first. */
function pathHeadings(note: Note): string[] {
  const page = pageName(note.title).toLowerCase();
  return (note.headings ?? note.heading ?? '')
    .split(' › ')
    .map((heading) => heading.trim())
    .filter((heading) => {
      const folded = heading.toLowerCase();
      // The page's own heading ("git-reset(1) Manual Page" on "git-reset(1)") says nothing more; an
      // entry named after the page ("url.searchParams" on "URL") does.
      const own = folded === page || folded.startsWith(`${page} `);
      return heading && !own && heading !== pageName(note.title, note.headings);
    });
}

/** The headings of a note's path that name a topic (not code, not the page's own title), outermost first. */
function topicHeadings(note: Note): string[] {
  return pathHeadings(note).filter((heading) => !isCodeTitle(heading) && /\p{L}{3,}/u.test(heading));
}

/**
 * A page's name as a heading: its title without the manual's name ("Define (GNU M4 …)" → "Define");
 * a manual page's own heading when its title is only the command ("git-reset(1)" → "git-reset(1)
 * Manual Page").
 */
function pageName(title: string, headings?: string): string {
  const short = title
    .replace(/\s+\([^()]*\b(?:manual|documentation|processor|guide|handbook)\b[^()]*\)\s*$/i, '')
    .replace(/\s+[|—–]\s+[^|—–]*\b(?:manual|documentation|docs)\b[^|—–]*$/i, '')
    .trim();
  const first = headings?.split(' › ')[0]?.trim() ?? '';
  if (/^[\w.+-]+\(\d\w*\)$/.test(short) && first.startsWith(short) && first.length > short.length) return first;
  return short || title;
}

/**
 * Where a passage is, in one line: its page, then its section (`git-reset(1) › EXAMPLES › Undo a
 * commit`), and the entry it documents when that is code (`File system › fs.watch(filename[,
 * options][, listener]) › Caveats › Availability`, `git-clean(1) › OPTIONS › -x`): a passage that
 * says "This feature…" or "Don't use the standard ignore rules" is about that entry. Code never
 * titles a section of the report, but it does say where a quote is.
 */
export function placeOf(note: Note): string {
  const path = pathHeadings(note);
  const topics = new Set(topicHeadings(note).slice(-2));
  const entry = path.findLast((heading) => isCodeTitle(heading) || !/\p{L}{3,}/u.test(heading));
  const shown = path.filter(
    (heading, index) => topics.has(heading) || (heading === entry && path.indexOf(heading) === index),
  );
  return [pageName(note.title, note.headings), ...shown].join(' › ');
}

/** A section title for a passage: its section's heading, and its page when that says more. */
function titleFor(note: Note, withPage: boolean): string {
  const heading = topicHeadings(note).at(-1);
  const page = pageName(note.title, note.headings);
  if (!heading) return page;
  if (!withPage || heading.toLowerCase().includes(page.toLowerCase())) return heading;
  return `${heading} — ${page}`;
}

/** The passage's words, folded, to find a passage met twice (a page and its mirror, two searches). */
function foldedText(note: Note): string {
  return note.text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * A passage's sentences of six words or more, folded: two passages that share one repeat each other.
 * Each block, list item and table row is read on its own: an entry's description that two entries
 * share ("- `ttl` <boolean> Retrieve the Time-To-Live value…") is one sentence, whatever item is
 * above it.
 */
function sentenceKeys(note: Note): string[] {
  return note.text
    .split(/\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)]|\|)\s)/)
    .flatMap((line) => splitSentences(line.replace(/\s+/g, ' ')))
    .map((sentence) =>
      sentence
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim(),
    )
    .filter((key) => key.split(' ').length >= 6);
}

/** Two passages of the same part of a page: their heading paths agree to the section under the page's own. */
function samePart(a: Note, b: Note): boolean {
  const part = (note: Note) => (note.headings ?? note.heading ?? '').split(' › ').slice(0, 2).join(' › ');
  return part(a) === part(b);
}

function overlaps(a: Note, b: Note): boolean {
  return a.url === b.url && a.start !== undefined && b.start !== undefined && a.start < b.end! && b.start < a.end!;
}

/** The outline of an answer made of passages; no sections when nothing scores above zero. */
export function answerOutline(title: string, notes: readonly Note[], settings: ResearchSettings): Outline {
  const size = sizes[settings.reportLength];
  // Each passage once (the same words met again, from another page or search, count once).
  // A sentence quoted twice (a page and its mirror, two pages that repeat each other) is quoted once.
  const seen = new Set<string>();
  const kept: Note[] = [];
  for (const note of [...notes].sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || a.id.localeCompare(b.id))) {
    const keys = [foldedText(note), ...sentenceKeys(note)];
    if ((note.score ?? 0) <= 0 || keys.some((key) => seen.has(key)) || kept.some((other) => overlaps(note, other)))
      continue;
    // Nearly the same words (an example shown twice, for two module systems) count once too.
    if (kept.some((other) => similarity(noteTerms(note), noteTerms(other)) >= NEAR_COPY)) continue;
    for (const key of keys) seen.add(key);
    kept.push(note);
  }
  if (kept.length === 0) return { title, sections: [] };
  const byPage = new Map<string, Note[]>();
  for (const note of kept) byPage.set(note.url, [...(byPage.get(note.url) ?? []), note]);
  // Pages compared by their best passage, without what it owes to the page's title (the search
  // weighed titles already: a page is never put above the search's first for a title-word match),
  // times the prior of the page's place in the run's first search. The entry that defines a symbol
  // the question names counts as if on the first page, on the best-placed page that has one (a page
  // of the first search before one found later): the sessions topic that mentions SESSION_COOKIE_AGE,
  // ranked first, does not answer before the setting's own entry on the settings reference, second.
  const prior = priors(notes);
  const placed = (url: string) => prior.get(url) ?? UNSEARCHED_PRIOR;
  const defines = (note: Note) => note.definition === true && note.entry === true;
  const entryPlaces = [...byPage.entries()].flatMap(([url, members]) => (members.some(defines) ? [placed(url)] : []));
  const entryPlace = Math.max(0, ...entryPlaces);
  const weight = (url: string, note: Note) => (defines(note) && placed(url) === entryPlace ? 1 : placed(url));
  const pages = [...byPage.entries()]
    .map(([url, members]) => ({
      url,
      members,
      score: Math.max(...members.map((note) => ((note.score ?? 0) - (note.titleBonus ?? 0)) * weight(url, note))),
    }))
    .sort((a, b) => b.score - a.score || a.url.localeCompare(b.url));
  const [answer, ...others] = pages as [(typeof pages)[number], ...typeof pages];
  const best = answer.members[0]!;
  const chosen = [best];
  // Passages of the same page that answer nearly as well belong with the best one.
  for (const note of answer.members.slice(1)) {
    if (chosen.length >= size.answer) break;
    const ratio = (note.score ?? 0) / Math.max(1e-9, best.score ?? 0);
    // (A definition is the answer to "what is": another part of the page defines something else.)
    if (ratio >= ANSWER_FLOOR && (samePart(note, best) || !best.definition)) chosen.push(note);
  }
  // The best first (or the passage that defines what the question asks about, when the best only
  // shows it in use), then the rest in the page's order.
  const defining = best.definition ? undefined : chosen.find((note) => note.definition);
  if (defining) {
    chosen.splice(chosen.indexOf(defining), 1);
    chosen.unshift(defining);
  }
  chosen.splice(1, chosen.length - 1, ...chosen.slice(1).sort((a, b) => (a.start ?? 0) - (b.start ?? 0)));
  // The page's own summary of itself (a manual page's NAME line, a module's opening sentence), when
  // the answer is elsewhere on the page, opens the answer: what the page is, then what it says.
  const summary = answer.members.find((note) => note.summary);
  if (summary && !chosen.includes(summary)) chosen.unshift(summary);
  const sections: OutlineSection[] = [
    {
      title: titleFor(best, true),
      focus: `The answer to: ${title}`,
      noteIds: chosen.map((note) => note.id),
    },
  ];
  const titles = new Set([sections[0]!.title.toLowerCase()]);
  for (const page of others) {
    if (sections.length > size.also) break;
    const note = page.members[0]!;
    if (page.score < answer.score * ALSO_FLOOR) continue;
    // The page's own summary of itself first (a manual page's NAME line): what the page is for, under
    // a title that names the page.
    const summary = page.members.find((member) => member.summary);
    let sectionTitle = titleFor(note, summary !== undefined);
    if (titles.has(sectionTitle.toLowerCase())) sectionTitle = titleFor(note, true);
    if (titles.has(sectionTitle.toLowerCase())) continue;
    titles.add(sectionTitle.toLowerCase());
    sections.push({
      title: sectionTitle,
      focus: `What "${note.title}" says${note.heading ? ` under "${note.heading}"` : ''}.`,
      noteIds: summary && summary !== note ? [summary.id, note.id] : [note.id],
      group: ALSO_GROUP,
    });
  }
  return { title, sections };
}

const termsOfNote = new WeakMap<Note, Set<string>>();

/** Terms of a note, for telling passages apart. */
export function noteTerms(note: Note): Set<string> {
  let terms = termsOfNote.get(note);
  if (!terms) {
    terms = new Set(stems(note.text));
    termsOfNote.set(note, terms);
  }
  return terms;
}
