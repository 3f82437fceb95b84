import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation';
import { QuarrySaver } from '../../src/langgraph/quarry-saver.ts';
import { PostgresDriver } from '../../src/store/postgres/postgres-driver.ts';
import { postgresTestUrl } from '../../src/store/postgres/postgres-harness.ts';

/** Where each saver of a test lives: a fresh SQLite file, or a fresh PostgreSQL schema. */
export function saverLocation(backend: 'sqlite' | 'postgres'): { location: string; drop: () => Promise<void> } {
  if (backend === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'quarry-langgraph-'));
    return { location: join(folder, 'quarry.db'), drop: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  const schema = `quarry_lg_${Math.random().toString(36).slice(2, 10)}`;
  const url = new URL(postgresTestUrl!);
  url.searchParams.set('schema', schema);
  return {
    location: url.toString(),
    drop: async () => {
      const raw = new PostgresDriver(postgresTestUrl!, { schema });
      await raw.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await raw.close();
    },
  };
}

/** LangGraph's validation suite's initializer: every checkpointer on a store of its own. */
export function saverInitializer(backend: 'sqlite' | 'postgres'): CheckpointSaverTestInitializer<QuarrySaver> {
  const drops = new WeakMap<QuarrySaver, () => Promise<void>>();
  return {
    checkpointerName: `QuarrySaver (${backend})`,
    async createCheckpointer() {
      const { location, drop } = saverLocation(backend);
      const saver = await QuarrySaver.open(location);
      drops.set(saver, drop);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await saver.close();
      await drops.get(saver)?.();
    },
  };
}

/** The suite is written for Jest's globals; vitest provides the same functions as imports. */
export async function withTestGlobals(): Promise<void> {
  const vitest = await import('vitest');
  const { describe, it, test, expect, beforeAll, afterAll, beforeEach, afterEach } = vitest;
  Object.assign(globalThis, { describe, it, test, expect, beforeAll, afterAll, beforeEach, afterEach });
}
