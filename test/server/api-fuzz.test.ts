import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/engine/runner.ts';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { createWorkflowRegistry } from '../../src/service/research-runtime.ts';
import type { StoreHarness, TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
/** Requests per operation of the OpenAPI document (its 48 operations made 7,200 requests a database on 2026-11-28). */
const CASES_PER_OPERATION = 150;

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  const?: unknown;
};
type Operation = {
  parameters?: { name: string; in: 'path' | 'query'; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
};

/** A small seeded generator, so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}

/** Strings that have broken servers: encodings, NUL, traversal, huge, odd numbers, unicode. */
const nastyStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '%25zz',
  '%zz',
  '%FF%FE',
  '../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e23',
  '-1',
  '9007199254740993',
  '0x10',
  'null',
  'true',
  '[]',
  '{}',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '💥'.repeat(50),
  '\u202e\u200b',
  'x'.repeat(5000),
  // Numbers no store column holds, as query values and inside forged list cursors (issue 44).
  '1e999',
  '-1e999',
  '-0',
  '0.5',
  '2147483648',
  '9223372036854775808',
];
/** List cursors as the server writes them (base64url JSON), forged with numbers no store holds. */
const forgedCursors = [
  '[1e999,"x"]',
  '[-1e999,"x"]',
  '[1e20,"x"]',
  '[1.5,"x"]',
  '[1e308,"x"]',
  '[-1,"x"]',
  '["x",1]',
].map((cursor) => Buffer.from(cursor).toString('base64url'));
/** Numbers for offsets and limits: past 32 and 64 bits, fractional, negative, not finite. */
const nastyNumbers = ['2147483648', '9007199254740993', '9223372036854775808', '1e999', '-1', '0.5', '-0', 'NaN'];
const nastyValues: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  Number.MAX_SAFE_INTEGER + 2,
  [],
  {},
  [null],
  { '': '' },
  { __proto__: { polluted: true } },
  -2147483649,
  2 ** 31,
  2 ** 63,
  // JSON number literals JavaScript cannot write: 1e999 parses as Infinity.
  raw('1e999'),
  raw('-1e999'),
  raw('-0'),
  raw('1E400'),
  ...nastyStrings,
];

/** A number literal written into the JSON text as is. */
function raw(literal: string): string {
  return `__RAW_${literal}__`;
}

/** Stands for JSON nested `depth` levels deep; written as text, since stringifying it would overflow this stack. */
function deep(depth: number): string {
  return `__DEEP_${depth}__`;
}

function serialize(value: unknown): string {
  return JSON.stringify(value)
    .replace(/"__DEEP_(\d+)__"/g, (_match, depth: string) => {
      const levels = Number(depth);
      return `${'{"a":'.repeat(levels)}"bottom"${'}'.repeat(levels)}`;
    })
    .replace(/"__RAW_([-+.\deE]+)__"/g, '$1');
}

function describeFuzz(harness: StoreHarness, skipReason: string | null) {
  describe.skipIf(skipReason !== null)(`API fuzz on ${harness.name}`, () => {
    let database: TestDatabase;
    let server: RunningServer;
    let home: string;

    beforeEach(async () => {
      database = await harness.create();
      home = mkdtempSync(join(tmpdir(), 'quarry-fuzz-'));
      cpSync(fixtures, join(home, 'docs'), { recursive: true });
    });
    afterEach(async () => {
      await server?.close();
      await database.destroy();
      rmSync(home, { recursive: true, force: true });
    });

    it('answers every route of the OpenAPI document without a 5xx, and rejected requests change nothing', {
      timeout: within(240_000),
    }, async () => {
      const config = testConfig({ QUARRY_DOCS: join(home, 'docs'), QUARRY_PORT: '0' });
      // No runner: accepted requests queue work instead of racing the fingerprint below.
      server = await startServer({ store: database.store, config, runner: false, log: () => undefined });
      const base = `http://127.0.0.1:${server.port}`;
      const created = await (
        await fetch(`${base}/api/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: 'How does tidal power work?' }),
        })
      ).json();
      const sessionId = created.id as string;
      await new Runner({
        store: database.store,
        workflows: createWorkflowRegistry(database.store, config),
        log: () => undefined,
      }).runSession(sessionId);
      const steps = (await (await fetch(`${base}/api/sessions/${sessionId}/steps`)).json()).steps as {
        runId: string;
        key: string;
      }[];
      const document = await (await fetch(`${base}/api/openapi.json`)).json();
      const resolve = (schema: Schema | undefined): Schema => {
        if (!schema?.$ref) return schema ?? {};
        return resolve(document.components.schemas[schema.$ref.split('/').at(-1)!]);
      };

      const rng = random(20261122);
      /** A value that fits the schema (roughly); the mutations below make it wrong. */
      const valid = (schema: Schema | undefined, depth = 0): unknown => {
        const resolved = resolve(schema);
        if (resolved.const !== undefined) return resolved.const;
        if (resolved.enum) return rng.pick(resolved.enum);
        const options = resolved.anyOf ?? resolved.oneOf;
        if (options) return valid(rng.pick(options), depth);
        const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
        if (depth > 4) return null;
        switch (type) {
          case 'object': {
            const value: Record<string, unknown> = {};
            for (const [name, property] of Object.entries(resolved.properties ?? {}))
              if (resolved.required?.includes(name) || rng.chance(0.5)) value[name] = valid(property, depth + 1);
            return value;
          }
          case 'array':
            return Array.from({ length: Math.floor(rng.next() * 3) }, () => valid(resolved.items, depth + 1));
          case 'integer':
            return Math.floor(rng.next() * 5);
          case 'number':
            return rng.next() * 5;
          case 'boolean':
            return rng.chance(0.5);
          default:
            return rng.pick(['How do tides work?', 'plan', 'user', sessionId]);
        }
      };
      const mutate = (value: unknown): unknown => {
        if (rng.chance(0.15)) return rng.pick(nastyValues);
        if (value && typeof value === 'object' && !Array.isArray(value)) {
          const record = { ...(value as Record<string, unknown>) };
          const keys = Object.keys(record);
          const roll = rng.next();
          if (roll < 0.3 && keys.length) record[rng.pick(keys)] = mutate(record[rng.pick(keys)]);
          else if (roll < 0.5 && keys.length) delete record[rng.pick(keys)];
          else if (roll < 0.65)
            record[rng.pick(['extra', 'settings', 'docs', '__proto__', 'constructor'])] = rng.pick(nastyValues);
          else if (roll < 0.8 && keys.length) record[rng.pick(keys)] = rng.pick(nastyValues);
          else if (keys.length) record[rng.pick(keys)] = deep(rng.pick([50, 200, 5000]));
          return record;
        }
        if (Array.isArray(value))
          return rng.chance(0.5) ? [...value, rng.pick(nastyValues)] : Array(rng.pick([0, 1000])).fill('x');
        return rng.pick(nastyValues);
      };
      const pathValue = (name: string): string => {
        const step = rng.pick(steps);
        const good: Record<string, string> = { id: sessionId, runId: step.runId, key: encodeURIComponent(step.key) };
        if (rng.chance(0.3) && good[name]) return good[name]!;
        const nasty = rng.pick(nastyStrings).slice(0, 600);
        // Sometimes encoded once, sometimes raw (as an attacker's client sends it).
        return rng.chance(0.5) ? encodeURIComponent(nasty) : nasty.replace(/[/?#\s]/g, '');
      };

      const fingerprint = async () => {
        const page = await database.store.listSessions({ limit: 500 });
        const rows = page.sessions.map((session) =>
          [session.id, session.title, session.storedStatus, session.updatedAt, session.lastEventOffset].join(':'),
        );
        return `${rows.join('|')}#${(await database.store.listUsers()).length}`;
      };

      const failures: string[] = [];
      let sent = 0;
      let before = await fingerprint();
      for (const [template, operations] of Object.entries<Record<string, Operation>>(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (let index = 0; index < CASES_PER_OPERATION; index++) {
            let path = template;
            for (const parameter of operation.parameters ?? [])
              if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, pathValue(parameter.name));
            // Never delete the session everything else is aimed at.
            if (method === 'delete' && path.includes(sessionId)) path = path.replace(sessionId, 'not-this-one');
            const query = new URLSearchParams();
            for (const parameter of operation.parameters ?? [])
              if (parameter.in === 'query' && rng.chance(0.7))
                query.set(
                  parameter.name,
                  rng.chance(0.4)
                    ? String(valid(parameter.schema))
                    : parameter.name === 'cursor' && rng.chance(0.5)
                      ? rng.pick(forgedCursors)
                      : rng.chance(0.3)
                        ? rng.pick(nastyNumbers)
                        : String(rng.pick(nastyValues)).slice(0, 3000),
                );
            const headers: Record<string, string> = {};
            let body: string | undefined;
            if (operation.requestBody || (method !== 'get' && rng.chance(0.1))) {
              const schema = operation.requestBody?.content['application/json']?.schema;
              const roll = rng.next();
              if (roll < 0.1) body = '{"question": ';
              else if (roll < 0.15) body = 'not json at all';
              else body = serialize(rng.chance(0.9) ? mutate(valid(schema)) : valid(schema));
              headers['content-type'] = rng.chance(0.9)
                ? 'application/json'
                : rng.pick(['text/plain', 'application/x-www-form-urlencoded', '']);
            }
            const url = `${base}${path}${query.size ? `?${query}` : ''}`;
            const label = `${method.toUpperCase()} ${url.slice(base.length, base.length + 200)} ${body?.slice(0, 200) ?? ''}`;
            let status: number;
            try {
              const response = await fetch(url, {
                method: method.toUpperCase(),
                headers,
                body,
                signal: AbortSignal.timeout(5000),
              });
              status = response.status;
              await response.body?.cancel();
            } catch (error) {
              // A stream (events, a chat waiting for a run no worker takes) that was still open: no answer to judge.
              if ((error as Error).name === 'TimeoutError') continue;
              failures.push(`${label} → ${(error as Error).message}`);
              continue;
            }
            sent++;
            const after = await fingerprint();
            if (status >= 500) failures.push(`${label} → ${status}`);
            else if (status >= 400 && after !== before) failures.push(`${label} → ${status}, but stored data changed`);
            before = after;
          }
        }
      }
      expect(failures).toEqual([]);
      expect(sent).toBeGreaterThan(1000);
    });
  });
}

describeFuzz(sqliteHarness, null);
describeFuzz(postgresHarness, postgresSkipReason());
