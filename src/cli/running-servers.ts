import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The `quarry serve` processes of this machine, each announced by a file in `$QUARRY_HOME/servers`
 * while it listens: what `quarry share` needs to print a link to the server that is really running
 * (its port, its address), not the default one.
 */
export interface RunningServer {
  pid: number;
  url: string;
  /** The store it serves, as `store.info().location` names it. */
  store: string;
}

const folder = (home: string) => join(home, 'servers');

/** Announces this process's server; the returned function withdraws it (on close). */
export function announceServer(home: string, server: Omit<RunningServer, 'pid'>): () => void {
  const file = join(folder(home), `${process.pid}.json`);
  try {
    mkdirSync(folder(home), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ pid: process.pid, ...server }), { mode: 0o600 });
  } catch {
    // Announcing is a convenience for `quarry share`: a read-only home never stops a server.
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The servers of this machine that serve `store` and still run (files of dead ones are removed). */
export function runningServers(home: string, store: string): RunningServer[] {
  let names: string[];
  try {
    names = readdirSync(folder(home)).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  const found: RunningServer[] = [];
  for (const name of names) {
    const file = join(folder(home), name);
    let server: RunningServer;
    try {
      server = JSON.parse(readFileSync(file, 'utf8')) as RunningServer;
    } catch {
      continue;
    }
    if (!Number.isInteger(server.pid) || typeof server.url !== 'string') continue;
    if (!alive(server.pid)) {
      rmSync(file, { force: true });
      continue;
    }
    if (server.store === store) found.push(server);
  }
  return found;
}
