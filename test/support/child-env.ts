import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let home: string | undefined;

/** This test process's own home folder for the processes it starts (removed when it exits). */
function childHome(): string {
  if (!home) {
    const created = mkdtempSync(join(tmpdir(), 'quarry-test-home-'));
    home = created;
    process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  return home;
}

/**
 * The whole environment of a process a test starts (the CLI, a server, a worker, a child of the
 * engine's suite): where to find programs, a home of its own, and what the test gives it — never
 * what the test runner's environment happens to hold (a `QUARRY_DB`, `QUARRY_MODEL`, `OTEL_*`…
 * there made a test pass or fail by where it ran).
 */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: childHome(),
    QUARRY_HOME: childHome(),
  };
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}
