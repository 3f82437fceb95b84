import { describeCommandLine, describeInterruptedRun } from './cli-suite.ts';

describeCommandLine('sqlite');
describeInterruptedRun();
