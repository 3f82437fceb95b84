import { validate } from '@langchain/langgraph-checkpoint-validation';
import { describe } from 'vitest';
import { postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { saverInitializer, withTestGlobals } from './saver-initializer.ts';

const skip = postgresSkipReason();

// LangGraph's own checkpointer validation suite, unchanged, against Quarry's store on PostgreSQL.
await withTestGlobals();
if (skip === null) validate(saverInitializer('postgres'));
else describe.skip(`QuarrySaver (postgres) (skipped: ${skip})`, () => undefined);
