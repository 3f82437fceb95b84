import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { z } from 'zod';
import { invalidInput } from '../store/errors.ts';

/** Defaults for every command, from `$QUARRY_HOME/config.json` and then the environment (which wins). */
export interface CliDefaults {
  db?: string;
  docs: string[];
  search: string[];
  model?: string;
}

const fileSchema = z.object({
  db: z.string().optional(),
  docs: z.array(z.string()).optional(),
  search: z.array(z.string()).optional(),
  model: z.string().optional(),
});

export function quarryHome(env: NodeJS.ProcessEnv): string {
  return resolve(env.QUARRY_HOME ?? join(homedir(), '.quarry'));
}

function list(value: string | undefined, separator: string | RegExp): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(separator).map((item) => item.trim()).filter(Boolean);
}

export function loadCliDefaults(env: NodeJS.ProcessEnv = process.env): CliDefaults {
  const path = join(quarryHome(env), 'config.json');
  let file: z.infer<typeof fileSchema> = {};
  if (existsSync(path)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw invalidInput('config', `${path} is not valid JSON: ${(error as Error).message}`);
    }
    const result = fileSchema.safeParse(parsed);
    if (!result.success) throw invalidInput('config', `${path}: ${result.error.issues[0]!.path.join('.')} ${result.error.issues[0]!.message}`);
    file = result.data;
  }
  return {
    db: env.QUARRY_DB ?? file.db,
    // Folders are separated like PATH (":" here); providers by commas.
    docs: list(env.QUARRY_DOCS, delimiter) ?? file.docs ?? [],
    search: list(env.QUARRY_SEARCH, ',') ?? file.search ?? [],
    model: env.QUARRY_MODEL ?? file.model,
  };
}
