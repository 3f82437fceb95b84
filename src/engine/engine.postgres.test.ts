import { postgresHarness, postgresSkipReason } from '../store/postgres/postgres-harness.ts';
import { describeEngine } from './engine-suite.ts';

describeEngine(postgresHarness, postgresSkipReason());
