/** The command line from the TypeScript sources, for a checkout: `npm run dev -- <command>` (tsx). */
import { runCli } from './main.ts';

await runCli(process.argv);
