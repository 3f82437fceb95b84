import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../../../config/package-root.ts';
import type { DocumentKind } from '../../extract/extracted-document.ts';
import { type ReadDocument, readDocument } from './read-document.ts';

type Pending = {
  resolve: (document: ReadDocument | Promise<ReadDocument>) => void;
  reject: (error: Error) => void;
  /** The document to read again on this thread if its worker dies. */
  again: () => Promise<ReadDocument>;
  worker: Worker;
};

/**
 * Bytes read on this thread before the pool starts its workers: a folder this small (the README's
 * `docs/`, a few notes) is read in less time than starting a thread takes, which loads every reader
 * again (about a tenth of a second for `quarry run --docs docs` on a new store).
 */
const IN_THREAD_BYTES = 256 * 1024;

/**
 * Reads documents on worker threads, one per core: extraction is most of indexing's time, and a
 * manual's pages are independent. The first few documents (`IN_THREAD_BYTES`) are read on this
 * thread, and so is everything when a worker cannot start. Results come back per call, so the
 * caller decides the order in which they are stored.
 */
export class ExtractPool {
  private readonly workers: { worker: Worker; busy: number }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  private started = false;
  /** Bytes read on this thread so far, before the workers start. */
  private readHere = 0;

  private constructor(private readonly size: number) {}

  /** The workers start at the first document to read: indexing that finds nothing changed starts none. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    for (let index = 0; index < this.size; index++) {
      const worker = startWorker();
      if (!worker) break;
      const entry = { worker, busy: 0 };
      worker.on('message', (message: { id: number; document?: ReadDocument; error?: string }) => {
        entry.busy -= 1;
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error !== undefined) waiting?.reject(new Error(message.error));
        else waiting?.resolve(message.document!);
      });
      worker.on('error', () => {
        // A worker that dies (or never starts) hands what it held to this thread; the rest carry on.
        for (const [id, waiting] of this.pending) {
          if (waiting.worker !== worker) continue;
          this.pending.delete(id);
          waiting.resolve(waiting.again());
        }
        this.workers.splice(this.workers.indexOf(entry), 1);
      });
      this.workers.push(entry);
    }
  }

  /** A pool of `size` workers (default: one per core). */
  static open(size = availableParallelism()): ExtractPool {
    return new ExtractPool(Math.max(1, size));
  }

  /** How many documents the pool reads at once. */
  get parallelism(): number {
    return this.size;
  }

  /** How many worker threads are running now (none before the pool's first `IN_THREAD_BYTES`). */
  get threads(): number {
    return this.workers.length;
  }

  read(bytes: Uint8Array, kind: DocumentKind, path: string): Promise<ReadDocument> {
    if (!this.started && this.readHere + bytes.byteLength <= IN_THREAD_BYTES) {
      this.readHere += bytes.byteLength;
      return readDocument(bytes, kind, path);
    }
    this.start();
    if (this.workers.length === 0) return readDocument(bytes, kind, path);
    const entry = this.workers.reduce((least, each) => (each.busy < least.busy ? each : least));
    entry.busy += 1;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, again: () => readDocument(bytes, kind, path), worker: entry.worker });
      entry.worker.postMessage({ id, bytes, kind, path });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
    this.workers.length = 0;
  }
}

/**
 * A worker running extract-worker: the built one in dist/cli, or, when this module runs from its
 * TypeScript source (`npm run dev`, tests), the source through tsx, registered inside the worker
 * since a thread does not inherit its parent's loader. Null when none can start.
 */
function startWorker(): Worker | null {
  const here = import.meta.url;
  try {
    if (!here.endsWith('.ts')) return new Worker(join(packageRoot(), 'dist', 'cli', 'extract-worker.js'));
    // tsx's ES module entry (require.resolve would give its CommonJS one).
    const manifest = createRequire(here).resolve('tsx/package.json');
    const tsx = pathToFileURL(join(dirname(manifest), 'dist', 'esm', 'api', 'index.mjs')).href;
    const source = new URL('./extract-worker.ts', here).href;
    return new Worker(
      `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`,
      { eval: true },
    );
  } catch {
    return null;
  }
}
