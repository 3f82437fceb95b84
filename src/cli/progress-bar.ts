import type { IndexProgress } from '../providers/search/local-corpus/index-folders.ts';
import type { CliRuntime } from './cli-runtime.ts';

/**
 * A progress bar for indexing on a terminal (standard error, redrawn in place); nothing when piped or
 * with `--json`, so scripts read clean output.
 */
export function indexProgress(runtime: CliRuntime): { update: (progress: IndexProgress) => void; done: () => void } {
  const shown = !runtime.json && process.stderr.isTTY;
  let drawn = false;
  return {
    update({ done, total }) {
      if (!shown || total < 20) return;
      const width = 30;
      const filled = Math.round((done / Math.max(1, total)) * width);
      process.stderr.write(
        `\rIndexing documents [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`,
      );
      drawn = true;
    },
    done() {
      if (drawn) process.stderr.write('\r\x1b[2K');
    },
  };
}
