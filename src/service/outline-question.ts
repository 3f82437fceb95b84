import type { Outline } from '../research/research-types.ts';

/** The outline a review asks about, as the question the reader answers. */
export function outlineQuestion(outline: Outline | undefined): string {
  const sections = (outline?.sections ?? [])
    .map((section, index) => `${index + 1}. ${section.title}: ${section.focus}`)
    .join('\n');
  return `Here is the outline of the report:\n\n${sections}\n\nReply "approve" to write it, or say what to change.`;
}
