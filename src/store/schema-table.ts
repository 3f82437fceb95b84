import type * as z from 'zod';

/**
 * The compile-time contract between a store interface and its table of argument schemas
 * (`validating-store.ts`): every operation has an entry, and every entry fits its operation's
 * signature. Types only, besides `asNarrowAs`.
 */

/**
 * A schema the store's edge applies more narrowly than its operation's type, on purpose (the reason
 * stands beside each use): typed as accepting the whole type, so the signature check lets it by.
 */
export const asNarrowAs =
  <T>() =>
  <S extends z.ZodType>(schema: S): z.ZodType<T, T> =>
    schema as unknown as z.ZodType<T, T>;

/** The operations (methods) of a store-like interface. */
export type OperationOf<S> = { [K in keyof S]: S[K] extends (...args: never[]) => unknown ? K : never }[keyof S];

/** A schema table: every operation of `S`, each with one schema per argument (`null`: nothing to check). */
export type SchemaTable<S> = { [K in OperationOf<S>]: readonly z.ZodType[] | null };

/**
 * An operation's argument schemas as checked against its signature: one per positional argument,
 * each accepting every value the argument's type allows (a schema that drifted narrower than its
 * operation's signature, or one too few or too many, is `never` here and fails to compile).
 */
type Checked<T, P> = T extends null
  ? null
  : T extends readonly z.ZodType[]
    ? P extends readonly unknown[]
      ? T['length'] extends P['length']
        ? { [I in keyof T]: I extends keyof P ? ([P[I]] extends [z.input<T[I]>] ? T[I] : never) : never }
        : never
      : never
    : never;

/** The table a schema table must also be: each entry checked against its operation of `S`. */
export type CheckedTable<S, T extends SchemaTable<S>> = {
  [K in OperationOf<S>]: Checked<T[K], S[K] extends (...args: infer P) => unknown ? P : never>;
};
