/** Answers that approve an outline: exactly one of these words (trimmed, any case), or nothing at all. */
export const approvalWords = ['approve', 'ok', 'yes', 'lgtm', 'continue'] as const;

/**
 * True only for an exact approval word or an empty answer. Anything else is feedback, however
 * approving it sounds ("ok but add costs" is feedback): never substring matching.
 */
export function isApproval(answer: unknown): boolean {
  if (answer === null || answer === undefined) return true;
  const text = String(answer).trim().toLowerCase();
  return text === '' || (approvalWords as readonly string[]).includes(text);
}
