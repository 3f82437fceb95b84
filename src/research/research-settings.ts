import { z } from 'zod';
import { QuarryError } from '../shared/errors.ts';

/** Research settings, stored with the session; every field has a default. */
export const researchSettingsSchema = z.object({
  /** Shapes every LLM call (tone, audience, constraints). */
  systemInstruction: z.string().max(4000).optional(),
  maxIterations: z.number().int().min(1).max(10).default(3),
  queriesPerIteration: z.number().int().min(1).max(8).default(3),
  sourcesPerQuery: z.number().int().min(1).max(10).default(3),
  reportLength: z.enum(['short', 'medium', 'long']).default('medium'),
  language: z.string().min(2).max(20).default('English'),
  reviewOutline: z.boolean().default(false),
  /** Ask clarifying questions before researching an ambiguous question (needs a model). */
  clarify: z.boolean().default(false),
  /** Stop researching and write once this many tokens are spent (LLM analyst). */
  tokenBudget: z.number().int().min(1000).optional(),
  costBudgetUsd: z.number().min(0).optional(),
  /** `provider:model`; absent: the extractive analyst. */
  model: z.string().max(200).optional(),
  /** A faster model for light steps (titles, notes). */
  fastModel: z.string().max(200).optional(),
  /** Sampling temperature of every model call (0–2); absent: the provider's default. */
  temperature: z.number().min(0).max(2).optional(),
  /** Document folders searched through the local corpus (absolute paths). */
  docs: z.array(z.string().min(1).max(4000)).max(20).default([]),
  /** Web search providers by name. */
  search: z.array(z.string().min(1).max(50)).max(10).default([]),
});

export type ResearchSettings = z.infer<typeof researchSettingsSchema>;

const strictSettingsSchema = researchSettingsSchema.strict();

/**
 * Validated settings with defaults filled in; `INVALID_INPUT` names the bad field. `strict` (what
 * a request or an imported file asks for) also refuses a setting Quarry does not have, rather than
 * storing or silently dropping it; stored settings are read leniently.
 */
export function parseResearchSettings(value: unknown, options: { strict?: boolean } = {}): ResearchSettings {
  const result = (options.strict ? strictSettingsSchema : researchSettingsSchema).safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const [key] = issue.keys;
    throw new QuarryError(
      'INVALID_INPUT',
      `Unknown setting ${key}: the settings are ${Object.keys(researchSettingsSchema.shape).join(', ')}.`,
      { details: { field: `settings.${key}` } },
    );
  }
  const field = issue.path.join('.') || 'settings';
  throw new QuarryError('INVALID_INPUT', `Invalid setting ${field}: ${issue.message}`, {
    details: { field: `settings.${field}` },
  });
}

/** Words a report of each length aims for. */
export const reportWords = { short: 400, medium: 900, long: 1800 } as const;
