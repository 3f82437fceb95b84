/**
 * Contracts the compiler holds (checked by `tsc --noEmit`, part of `npm test`; nothing here runs).
 * Each `@ts-expect-error` marks a mistake that must not compile: if it ever compiles, the directive
 * itself is an error and the type check fails.
 */

import * as z from 'zod';
import type { ResearchContext } from '../../src/research/research-context.ts';
import { stepOutput } from '../../src/research/step-outputs.ts';
import type { OwnerStore } from '../../src/store/owner-store.ts';
import type { CheckedTable, SchemaTable } from '../../src/store/schema-table.ts';
import type { EngineStore, StepRecord } from '../../src/store/store.ts';

export function misspelledPhase(ctx: ResearchContext) {
  // @ts-expect-error a phase outside the research workflow's vocabulary
  void ctx.step({ key: 'iteration-1/read-0', phase: 'raed' }, () => null);
  void ctx.step({ key: 'iteration-1/read-0', phase: 'read' }, () => null);
}

export function wrongStepOutputRead(step: StepRecord) {
  // A read step journals the source itself, not a thought with a value.
  // @ts-expect-error `value` is not what a read step stores
  void stepOutput(step, 'read')?.value;
  void stepOutput(step, 'read')?.text;
  // @ts-expect-error a notes step stores its notes under `value`
  void stepOutput(step, 'notes')?.text;
  void stepOutput(step, 'notes')?.value.map((note) => note.text);
  // @ts-expect-error no such kind of research step
  void stepOutput(step, 'reed');
}

/** A store of two operations, checked as the validating store checks the real one. */
interface TwoOperations {
  get(id: string): Promise<void>;
  put(id: string, count: number): Promise<void>;
}
const table = { get: [z.string()], put: [z.string(), z.number()] } as const satisfies SchemaTable<TwoOperations>;
export const checked: CheckedTable<TwoOperations, typeof table> = table;

// @ts-expect-error an operation without its schemas
export const forgotten = { get: [z.string()] } as const satisfies SchemaTable<TwoOperations>;

const drifted = { get: [z.number()], put: [z.string(), z.number()] } as const satisfies SchemaTable<TwoOperations>;
// @ts-expect-error a schema that no longer accepts its argument's type (a number where it takes a string)
export const driftedChecked: CheckedTable<TwoOperations, typeof drifted> = drifted;

const short = { get: [z.string()], put: [z.string()] } as const satisfies SchemaTable<TwoOperations>;
// @ts-expect-error one schema short of the operation's arguments
export const shortChecked: CheckedTable<TwoOperations, typeof short> = short;

export function engineConcerns(store: EngineStore) {
  void store.beginStep;
  // @ts-expect-error the engine takes sessions, journal and events, never the corpus
  void store.searchPassages;
  // @ts-expect-error nor the accounts
  void store.listUsers;
}

/** One user's store: each operation is the store's own, without the owner (derived, never re-declared). */
export async function ownerScoped(store: OwnerStore) {
  await store.getSession('s1');
  // @ts-expect-error an owner's handle takes no owner: it is always its own
  await store.getSession('s1', { ownerId: 'someone-else' });
  await store.listSessions({ limit: 10 });
  // @ts-expect-error nor in an operation's options
  await store.listSessions({ limit: 10, ownerId: 'someone-else' });
  await store.requestStop('s1', { reason: 'the user asked' });
  // @ts-expect-error what remains of the owner parameter keeps the store's types
  await store.requestStop('s1', { reason: 7 });
  await store.deliverInput({ sessionId: 's1', runId: 'r1', requestKey: 'clarify', value: 'yes' });
  // @ts-expect-error a required input stays required
  await store.deliverInput();
  // @ts-expect-error the corpus and the accounts are not a user's
  void store.searchPassages;
}
