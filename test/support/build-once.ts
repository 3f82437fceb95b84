import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Vitest's global setup: builds dist/cli and dist/langgraph from the sources under test, so tests
 * that spawn bin/quarry run the build an install ships, never a stale one (about half a second).
 */
export default function buildOnce(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  execFileSync(process.execPath, ['scripts/build.mjs', '--no-types'], { cwd: root, stdio: 'inherit' });
}
