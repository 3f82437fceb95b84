import type * as z from 'zod';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import { accountSchemas } from './accounts-contract.ts';
import { corpusSchemas } from './corpus-contract.ts';
import { eventSchemas } from './events-contract.ts';
import { findNul } from './find-nul.ts';
import { journalSchemas } from './journal-contract.ts';
import type { CheckedTable, OperationOf, SchemaTable } from './schema-table.ts';
import { sessionSchemas } from './sessions-contract.ts';
import type { Store } from './store.ts';

/**
 * Positional argument schemas of every operation (`null`: an operation with no arguments to check),
 * each concern's from its contract file, where they stand beside the interface they check.
 */
const argumentSchemas = {
  ...sessionSchemas,
  ...journalSchemas,
  ...eventSchemas,
  ...corpusSchemas,
  ...accountSchemas,
  // Nothing a caller sends to check: the store's own description and its end.
  info: null,
  close: null,
} as const satisfies SchemaTable<Store>;

/**
 * Every operation's schemas checked against its signature: an operation without an entry, or with
 * schemas that do not fit its signature, does not compile (see `Checked`).
 */
const checkedAgainstStore: CheckedTable<Store, typeof argumentSchemas> = argumentSchemas;
void checkedAgainstStore;

function schemasOf(method: PropertyKey): readonly z.ZodType[] | undefined {
  if (typeof method !== 'string' || !Object.hasOwn(argumentSchemas, method)) return undefined;
  return argumentSchemas[method as OperationOf<Store>] ?? undefined;
}

function toQuarryError(method: string, position: number, error: z.ZodError): QuarryError {
  const issue = error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : `argument ${position + 1}`;
  const tooLarge = (issue as { params?: { tooLarge?: boolean } }).params?.tooLarge === true;
  return new QuarryError(
    tooLarge ? 'PAYLOAD_TOO_LARGE' : 'INVALID_INPUT',
    `Invalid ${field} for ${method}: ${issue.message}`,
    {
      details: { field, method },
    },
  );
}

/**
 * Wraps a store so every call's arguments are checked before the backend sees them: one place for
 * validation, shared by every backend. Parsed values (trimmed strings) replace the originals.
 */
export function validatingStore(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      const schemas = schemasOf(property);
      if (typeof value !== 'function' || !schemas) return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const parsed = [...args];
        for (const [position, schema] of schemas.entries()) {
          const result = schema.safeParse(args[position]);
          if (!result.success) return Promise.reject(toQuarryError(String(property), position, result.error));
          const nul = findNul(args[position], `argument ${position + 1}`);
          if (nul) return Promise.reject(invalidInput(nul, `must not contain NUL characters (in ${String(property)})`));
          // Keep the caller's object when the schema only checked it (signals, buffers, undefined payloads).
          if (typeof args[position] === 'string') parsed[position] = result.data;
          else if (isPlainObject(args[position]) && isPlainObject(result.data)) {
            parsed[position] = {
              ...(args[position] as object),
              ...pickStrings(result.data as Record<string, unknown>),
            };
          }
        }
        return (value as (...callArgs: unknown[]) => unknown).apply(target, parsed);
      };
    },
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Trimmed top-level strings from the parsed value, so checks and stored values agree. */
function pickStrings(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => typeof value === 'string'));
}
