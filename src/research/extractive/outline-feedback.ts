import { stems } from '../relevance.ts';
import type { Note, Outline, OutlineSection } from '../research-types.ts';

/**
 * Outline feedback the extractive analyst understands, one command per clause (clauses separated by
 * new lines, semicolons, or ", then"):
 *   drop <section> · add <topic> · more about <topic> · rename <section> to <title>
 * Anything else is reported back as not understood, with the commands it would have understood.
 */
export type FeedbackCommand =
  | { kind: 'drop'; target: string; text: string }
  | { kind: 'add'; topic: string; text: string }
  | { kind: 'more'; topic: string; text: string }
  | { kind: 'rename'; target: string; title: string; text: string }
  | { kind: 'unknown'; text: string };

export const FEEDBACK_HELP =
  'say "drop <section>", "add <topic>", "more about <topic>" or "rename <section> to <title>"';

const unquote = (text: string) =>
  text
    .trim()
    .replace(/^["'“‘«]|["'”’»]$/g, '')
    .replace(/[.!]+$/, '')
    .trim();

/** Reads feedback into commands; every clause becomes exactly one command. */
export function parseFeedback(feedback: string): FeedbackCommand[] {
  return (
    feedback
      .split(/\n|;|,\s*then\s+/i)
      // "ok, but drop X": the approval before "but" is not a command.
      .map((clause) => clause.trim().replace(/^(?:ok|okay|yes|good|fine|looks good|lgtm)\b[,.!]?\s*(?:but\s+)?/i, ''))
      .filter(Boolean)
      .map((text): FeedbackCommand => {
        let match = /^(?:please\s+)?(?:drop|remove|delete|cut|skip)\s+(?:the\s+)?(?:section\s+)?(.+)$/i.exec(text);
        if (match) return { kind: 'drop', target: unquote(match[1]!), text };
        match = /^(?:please\s+)?rename\s+(?:the\s+)?(?:section\s+)?(.+?)\s+(?:to|as)\s+(.+)$/i.exec(text);
        if (match) return { kind: 'rename', target: unquote(match[1]!), title: unquote(match[2]!), text };
        match =
          /^(?:please\s+)?(?:(?:tell me |say |write )?more\s+(?:about|on)|expand(?:\s+on)?|go deeper (?:into|on)|focus (?:more )?on)\s+(.+)$/i.exec(
            text,
          );
        if (match) return { kind: 'more', topic: unquote(match[1]!), text };
        match = /^(?:please\s+)?(?:add|include|cover)\s+(?:a\s+section\s+)?(?:on\s+|about\s+)?(.+)$/i.exec(text);
        if (match) return { kind: 'add', topic: unquote(match[1]!), text };
        return { kind: 'unknown', text };
      })
  );
}

/** The section whose title best matches `target` (most shared words, then earliest), or -1. */
function findSection(sections: readonly OutlineSection[], target: string): number {
  const wanted = new Set(stems(target));
  if (wanted.size === 0) return -1;
  let best = -1;
  let bestShare = 0;
  sections.forEach((section, index) => {
    const title = section.title.toLowerCase();
    const exact = title === target.toLowerCase() || title.includes(target.toLowerCase()) ? 1 : 0;
    const have = new Set(stems(section.title));
    const share = exact || [...wanted].filter((term) => have.has(term)).length / wanted.size;
    if (share > bestShare + 1e-9) {
      bestShare = share;
      best = index;
    }
  });
  return bestShare >= 0.5 ? best : -1;
}

/** Notes that mention every word of the topic (else most of them), best scored first, not already used. */
function notesAbout(topic: string, notes: readonly Note[], used: ReadonlySet<string>, count: number): Note[] {
  const wanted = stems(topic);
  if (wanted.length === 0) return [];
  const scored = notes
    .filter((note) => !used.has(note.id))
    .map((note) => {
      const have = new Set(stems(`${note.heading ?? ''} ${note.text}`));
      return { note, share: wanted.filter((term) => have.has(term)).length / wanted.length };
    })
    .filter((entry) => entry.share >= (wanted.length > 2 ? 0.66 : 1));
  return scored
    .sort(
      (a, b) => b.share - a.share || (b.note.score ?? 0) - (a.note.score ?? 0) || a.note.id.localeCompare(b.note.id),
    )
    .slice(0, count)
    .map((entry) => entry.note);
}

const titleCase = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Applies the commands to an outline, using the session's notes for new material. Returns the
 * revised outline with what was applied and what was not understood (or could not be done, and why).
 */
export function applyFeedback(previous: Outline, feedback: string, notes: readonly Note[]): Outline {
  const sections = previous.sections.map((section) => ({ ...section, noteIds: [...section.noteIds] }));
  const applied: string[] = [];
  const notUnderstood: string[] = [];
  const used = () => new Set(sections.flatMap((section) => section.noteIds));
  for (const command of parseFeedback(feedback)) {
    switch (command.kind) {
      case 'drop': {
        const index = findSection(sections, command.target);
        if (index < 0) notUnderstood.push(`"${command.text}": no section is called "${command.target}"`);
        else applied.push(`dropped "${sections.splice(index, 1)[0]!.title}"`);
        break;
      }
      case 'rename': {
        const index = findSection(sections, command.target);
        if (index < 0) notUnderstood.push(`"${command.text}": no section is called "${command.target}"`);
        else {
          applied.push(`renamed "${sections[index]!.title}" to "${command.title}"`);
          sections[index] = { ...sections[index]!, title: command.title };
        }
        break;
      }
      case 'more':
      case 'add': {
        const index = findSection(sections, command.topic);
        let found = notesAbout(command.topic, notes, used(), 3);
        if (found.length === 0 && index < 0) {
          // All the material on the topic is in other sections: it moves to the section asked for.
          found = notesAbout(command.topic, notes, new Set(), 3);
          const moved = new Set(found.map((note) => note.id));
          for (const section of sections) section.noteIds = section.noteIds.filter((id) => !moved.has(id));
        }
        if (found.length === 0) {
          notUnderstood.push(`"${command.text}": nothing in the sources read so far is about "${command.topic}"`);
        } else if (index >= 0) {
          sections[index]!.noteIds.push(...found.map((note) => note.id));
          applied.push(`added ${found.length} passage(s) about "${command.topic}" to "${sections[index]!.title}"`);
        } else {
          sections.push({
            title: titleCase(command.topic),
            focus: `What the sources say about ${command.topic}, as requested.`,
            noteIds: found.map((note) => note.id),
          });
          applied.push(`added a section "${titleCase(command.topic)}"`);
        }
        break;
      }
      case 'unknown':
        notUnderstood.push(`"${command.text}": not understood (${FEEDBACK_HELP})`);
        break;
    }
  }
  return {
    title: previous.title,
    sections: sections.filter((section) => section.noteIds.length > 0),
    feedback: { applied, notUnderstood },
  };
}
