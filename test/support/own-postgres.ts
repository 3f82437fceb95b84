import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { within } from './bounds.ts';

/** The newest PostgreSQL server binaries Debian installed (`/usr/lib/postgresql/<version>/bin`). */
function binaries(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const bin = versions.map((version) => join(root, version, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
  if (!bin) throw new Error('No PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql).');
  return bin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A PostgreSQL cluster of a test's own (never the shared one), for outages a test causes itself:
 * restarts, stops and starts. Runs as the `postgres` user when the test runs as root (the server
 * refuses to run as root).
 */
export class OwnPostgres {
  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<OwnPostgres> {
    const bin = binaries();
    const dir = mkdtempSync(join(tmpdir(), 'quarry-own-pg-'));
    chmodSync(dir, 0o700);
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    const cluster = new OwnPostgres(dir, await freePort(), bin);
    cluster.run('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    cluster.start();
    return cluster;
  }

  start(): void {
    this.run('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'server.log'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
      '-w',
      'start',
    ]);
  }

  /** Stops at once, ending every connection (as an operator's restart does). */
  stop(): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  restart(): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'restart']);
  }

  destroy(): void {
    try {
      this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(command: string, args: string[]): void {
    const path = join(this.bin, command);
    const asRoot = process.getuid?.() === 0;
    execFileSync(asRoot ? 'runuser' : path, asRoot ? ['-u', 'postgres', '--', path, ...args] : args, {
      stdio: 'ignore',
      cwd: this.dir,
      timeout: within(60_000),
    });
  }
}
