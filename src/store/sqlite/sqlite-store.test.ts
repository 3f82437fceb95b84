import { describeStoreConformance } from '../conformance/store-conformance.ts';
import { sqliteHarness } from './sqlite-harness.ts';

const backends = (process.env.STORE_BACKENDS ?? 'sqlite,postgres').split(',');
describeStoreConformance(sqliteHarness, backends.includes('sqlite') ? null : 'STORE_BACKENDS does not include sqlite');
