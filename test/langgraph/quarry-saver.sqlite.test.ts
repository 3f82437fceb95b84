import { validate } from '@langchain/langgraph-checkpoint-validation';
import { saverInitializer, withTestGlobals } from './saver-initializer.ts';

// LangGraph's own checkpointer validation suite, unchanged, against Quarry's store on SQLite.
await withTestGlobals();
validate(saverInitializer('sqlite'));
