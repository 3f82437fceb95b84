import type { ZodError } from 'zod';
import { invalidInput, QuarryError } from '../shared/errors.ts';

/**
 * The validators' hook: a request that fails its schema becomes `INVALID_INPUT` naming the field
 * (or `PAYLOAD_TOO_LARGE` for a string or list over its size limit), answered by the one error
 * handler like every other error.
 */
export function throwValidationError(result: { success: boolean; error?: ZodError; target?: string }): void {
  if (result.success || !result.error) return;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : (result.target ?? 'request');
  if (issue.code === 'too_big' && (issue.origin === 'string' || issue.origin === 'array')) {
    throw new QuarryError('PAYLOAD_TOO_LARGE', `Invalid ${field}: ${issue.message}`, { details: { field } });
  }
  throw invalidInput(field, issue.message);
}
