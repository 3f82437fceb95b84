import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type QuarryConfig, resolveConfig } from '../../src/config/quarry-config.ts';

/**
 * A configuration resolved the way every entry point resolves it, from the given environment and a
 * fresh, empty Quarry home (never the developer's own config file).
 */
export function testConfig(env: Record<string, string | undefined> = {}): QuarryConfig {
  return resolveConfig({ env: { QUARRY_HOME: mkdtempSync(join(tmpdir(), 'quarry-home-')), ...env } });
}

/** The environment that points Quarry at a local fake OpenAI-compatible model server. */
export function fakeModelEnv(baseUrl: string): Record<string, string> {
  return { QUARRY_MODEL: 'openai-compatible:fake', QUARRY_LLM_BASE_URL: baseUrl, QUARRY_LLM_API_KEY: 'k' };
}
