import { describeStoreConformance } from '../conformance/store-conformance.ts';
import { postgresHarness, postgresSkipReason } from './postgres-harness.ts';

describeStoreConformance(postgresHarness, postgresSkipReason());
