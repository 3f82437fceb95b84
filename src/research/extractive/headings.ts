import { coverage, mentionsSubject, type QuestionProfile, stems } from '../relevance.ts';

/**
 * What headings and titles say about a question: the topic a heading path names, how much a
 * heading or a page title is about the question, and whether it names the question's subject.
 */

/** A heading that names code (a signature, an option), not a topic. */
export function isCodeHeading(heading: string): boolean {
  // An API entry as documentation builders head it: "exception copy.Error", "class json.JSONEncoder".
  if (
    /^(?:abstract |async )?(?:class|exception|method|attribute|data|function|coroutine|awaitable|classmethod|staticmethod|property)\s+[\w.]+\s*(?:\(|$)/.test(
      heading,
    )
  )
    return true;
  return /[()=<>{}[\]]|^-|^[\w.]+$/.test(heading) && !/\s\w+\s/.test(heading.replace(/\(.*\)/, ''));
}

/** The last heading of a path that names a topic ("Data Types › JSON Types" → "JSON Types"), or "". */
export function lastHeading(headings: string | undefined): string {
  const path = (headings ?? '')
    .split(' › ')
    .map((heading) => heading.replace(/^#+\s*/, '').trim())
    .filter(Boolean);
  return path.findLast((heading) => !isCodeHeading(heading)) ?? path.at(-1) ?? '';
}

/**
 * How much a heading is about the question: the share of the question it names, times the share of
 * the heading that is the question's words ("decorator" names "What is a decorator?" fully; "PEP 318:
 * Decorators for Functions and Methods" only a little).
 */
export function namedBy(profile: QuestionProfile, heading: string): number {
  const words = new Set(stems(heading));
  if (words.size === 0) return 0;
  const precision = [...words].filter((term) => profile.terms.includes(term)).length / words.size;
  return coverage(profile, words) * precision;
}

/**
 * How much a page's title says the page is about the question: fully when the title's subject part
 * ("asyncio" in "asyncio — Asynchronous I/O") is what the question asks about, half when the title
 * names it among other things, a little for shared words.
 */
export function titledFor(profile: QuestionProfile, title: string): number {
  if (namesSubject(profile, titleHead(title))) return 1;
  // Named among other things ("Coroutines and Tasks"): about it, but not only.
  if (mentionsSubject(profile, title)) return 0.5;
  return 0.3 * coverage(profile, new Set(stems(title)));
}

/**
 * True for release notes and changelogs by their title ("What’s New In Python 3.8", "Release 15.2"):
 * they tell when something changed; the reference tells what it is and how to use it.
 */
export function isReleaseNotes(title: string): boolean {
  return /\b(?:what[’']?s new|release notes?|changelog|change log|changes in|release \d)/i.test(title);
}

/** The subject part of a page title ("asyncio — Asynchronous I/O" → "asyncio"). */
export function titleHead(title: string): string {
  return title.split(/\s+[—–-]\s+|:\s/)[0] ?? '';
}

/**
 * True when `text` names one of the question's subjects and nothing else: the same content words
 * ("decorator" for "What is a decorator?", "Named Tuples" for "What is a named tuple?").
 */
export function namesSubject(profile: QuestionProfile, text: string): boolean {
  const words = new Set(stems(text.replace(/`/g, '')));
  if (words.size === 0) return false;
  return profile.subjects.some((subject) => {
    const wanted = new Set(stems(subject));
    return wanted.size === words.size && [...wanted].every((term) => words.has(term));
  });
}
