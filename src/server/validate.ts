import type { Context } from 'hono';
import type { z } from 'zod';
import { QuarryError, invalidInput } from '../store/errors.ts';

function fail(error: z.ZodError, where: string): QuarryError {
  const issue = error.issues[0]!;
  return invalidInput(issue.path.join('.') || where, issue.message);
}

/** The JSON body, validated; malformed JSON and wrong fields are `INVALID_INPUT` naming the field. */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw invalidInput('body', 'is not valid JSON');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw fail(result.error, 'body');
  return result.data;
}

export function parseQuery<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const result = schema.safeParse(c.req.query());
  if (!result.success) throw fail(result.error, 'query');
  return result.data;
}

export function parseParam<S extends z.ZodType>(value: string | undefined, schema: S, name: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(name, result.error.issues[0]!.message);
  return result.data;
}
