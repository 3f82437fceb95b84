import { sqliteHarness } from '../store/sqlite/sqlite-harness.ts';
import { describeEngine } from './engine-suite.ts';

const backends = (process.env.STORE_BACKENDS ?? 'sqlite,postgres').split(',');
describeEngine(sqliteHarness, backends.includes('sqlite') ? null : 'STORE_BACKENDS does not include sqlite');
