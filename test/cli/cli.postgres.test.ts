import { describeCommandLine } from './cli-suite.ts';

describeCommandLine('postgres');
